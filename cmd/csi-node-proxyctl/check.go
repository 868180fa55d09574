package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// Checks of positional arguments, run before anything is asked or
// called: an operator who confirmed a change should not then learn that
// the path was malformed. They are the proxy's own validators where the
// groups export them, so the CLI refuses exactly what the proxy would
// (exit 6, errdefs.ErrInvalidArgument). Whether a path lies inside the
// working directories only the daemon knows; that stays its check.

// checkHostPath accepts an absolute path in either host syntax: the CLI
// cannot tell whether the daemon runs a Windows (or simulated) or a Linux
// backend, so a path either would clean is left to the daemon.
func checkHostPath(p string) error {
	_, werr := hostpath.Windows.Clean(p)
	if werr == nil {
		return nil
	}
	_, perr := hostpath.POSIX.Clean(p)
	if perr == nil {
		return nil
	}
	// The reason in the syntax the operator apparently meant.
	if strings.HasPrefix(p, "/") {
		return perr
	}
	return werr
}

// checkVolumeID accepts a volume ID either backend would: the Windows
// \\?\Volume{GUID}\ form, or a Linux ID (visible characters without
// spaces or separators). It is the volume group's own check for each
// style, so "volume format 'bad id'" is refused (exit 6) before the
// confirmation prompt, not after the operator said yes.
func checkVolumeID(id string) error {
	werr := volume.CheckVolumeID(id, hostpath.Windows)
	if werr == nil {
		return nil
	}
	perr := volume.CheckVolumeID(id, hostpath.POSIX)
	if perr == nil {
		return nil
	}
	// The reason in the form the operator apparently meant.
	if strings.HasPrefix(id, `\\`) {
		return werr
	}
	return perr
}

// checkRemote checks an SMB share path as the smb group does.
func checkRemote(p string) error {
	_, _, err := smb.ParseRemotePath(p)
	return err
}

// checkArgs runs each positional argument's check.
func checkArgs(cmd *command, pos []string) error {
	var errs []error
	for i, a := range pos {
		if i < len(cmd.args) && cmd.args[i].check != nil {
			if err := cmd.args[i].check(a); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// The argument checks by kind.
var (
	checkIQN     = iscsi.CheckIQN
	checkService = system.CheckServiceName
)

// suggest returns the words among candidates closest to word, for a "did
// you mean" after a typo: those within two edits, or that begin with it.
func suggest(word string, candidates []string) []string {
	var out []string
	for _, c := range candidates {
		if c == word {
			continue
		}
		if editDistance(word, c) <= min(2, max(1, len(word)/2)) || len(word) >= 3 && strings.HasPrefix(c, word) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// didYouMean renders suggestions for an error message: "" when there are
// none.
func didYouMean(word string, candidates []string) string {
	s := suggest(word, candidates)
	if len(s) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}

// editDistance is the Levenshtein distance of a and b, in bytes (command
// and flag names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// undefinedFlag extracts the name from the flag package's error for a
// flag it does not know ("flag provided but not defined: -nosuch").
func undefinedFlag(err error) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	return strings.TrimLeft(name, "-"), ok
}
