package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
)

// The smb ls, gc and reconcile commands call csi-node-proxy's own SMB
// mappings group (its endpoint csi-proxy-smbmappings-v1alpha1), not
// upstream's smb group; they sit under "smb" because that is where an
// operator looks for them.

// smbMappingOutput is one mapping in the JSON output.
type smbMappingOutput struct {
	RemotePath     string   `json:"remote_path" doc:"the share, \\\\server\\share, lower-cased"`
	Status         string   `json:"status" doc:"OK, Paused, Disconnected, NetworkError, Connecting, Reconnecting, Unavailable, Unknown, or Missing (links lead into the share but no mapping serves it)"`
	Links          []string `json:"links" doc:"the links under the working directories that lead into the share, sorted"`
	AgeSeconds     int64    `json:"age_seconds" doc:"seconds since the mapping was made, or since the proxy first saw it when age_is_first_seen"`
	AgeIsFirstSeen bool     `json:"age_is_first_seen" doc:"true where the host does not record when a mapping was made (Windows)"`
}

// smbListOutput is "smb ls -o json".
type smbListOutput struct {
	Mappings []smbMappingOutput `json:"mappings" doc:"every share with a mapping or a link, sorted"`
}

// smbGCOutput is "smb gc -o json".
type smbGCOutput struct {
	DryRun    bool               `json:"dry_run" doc:"true unless --apply: nothing was removed"`
	Removed   []smbMappingOutput `json:"removed" doc:"the unreferenced mappings removed (with dry_run: that would be removed)"`
	KeptYoung []smbMappingOutput `json:"kept_young" doc:"unreferenced mappings kept because they are younger than --grace"`
}

// smbReconcileOutput is "smb reconcile -o json". The password is never
// part of it.
type smbReconcileOutput struct {
	RemotePath     string   `json:"remote_path" doc:"the share, lower-cased"`
	Action         string   `json:"action" doc:"Healthy, Unreferenced (both: nothing done), Recreated or Created"`
	PreviousStatus string   `json:"previous_status" doc:"the status found; Missing for no mapping"`
	Links          []string `json:"links" doc:"the links that lead into the share"`
}

// smbMappingCommands are smb ls, gc and reconcile.
func smbMappingCommands() []command {
	return []command{
		{
			group: "smb", api: "smbmappings", name: "ls",
			summary: "List the node's SMB global mappings, their status and the links that use them",
			about: `Calls ListSmbGlobalMappings (csi-node-proxy's own smbmappings group; upstream
csi-proxy cannot list mappings): every SMB global mapping with its status, the
links under the working directories that lead into its share, and its age, plus
the shares that links lead into but no mapping serves (status Missing).
Windows does not record when a mapping was made, so there the age counts from
when the proxy first saw it (AGE ends in "+"). Changes nothing.`,
			example: `csi-node-proxyctl smb ls
csi-node-proxyctl smb ls -o json | jq -r '.mappings[] | select(.status != "OK") | .remote_path'`,
			output: smbListOutput{},
			flags:  noFlags(runSmbList),
		},
		{
			group: "smb", api: "smbmappings", name: "gc", mutating: true,
			summary: "Remove SMB global mappings no link uses (a dry run without --apply)",
			about: `Calls CollectSmbGlobalMappings: finds the SMB global mappings that no link under
the working directories leads into and that are older than --grace, and with
--apply removes them (Remove with Force, as RemoveSmbGlobalMapping does).
Without --apply it is a dry run: it lists them, removes nothing and asks no
confirmation (the proxy still records the call in its audit log, and a policy
must allow CollectSmbGlobalMappings).

A mapping is kept when any link leads into its share, whatever its status; a
mapping made outside Kubernetes on this node (by hand, by another service)
has no link either, so read the dry run before --apply. Shares are locked
while they are removed, so a volume being staged on one of them waits and
then maps it again.`,
			example: `csi-node-proxyctl smb gc
csi-node-proxyctl smb gc --apply --grace 30m --yes`,
			output: smbGCOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				apply := fs.Bool("apply", false, "Remove the mappings; without it, only list them")
				grace := fs.Duration("grace", smbmappings.DefaultGraceSeconds*time.Second, "Keep unreferenced mappings younger than this (at most a week)")
				return func(c *call) (*view, error) { return runSmbGC(c, *apply, *grace) }
			},
		},
		{
			group: "smb", api: "smbmappings", name: "reconcile", args: []argSpec{smbRemoteArg}, mutating: true,
			summary: "Re-create a share's mapping when links use it and it is not OK",
			about: `Calls ReconcileSmbGlobalMapping for REMOTE's share: when links under the working
directories lead into it and its mapping is not OK (Disconnected after a
reboot, Unavailable) or is gone, the mapping is removed and made again with
--user and the password; otherwise nothing is done (Healthy, Unreferenced).
Windows does not give a mapping's credentials back, so they must be given here,
as to smb map; the password is read as smb map reads it, and never printed.`,
			example: `csi-node-proxyctl smb reconcile '\\fileserver\share' --user 'CONTOSO\csi' --password-file /etc/csi/smb-password --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  smbReconcileOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				user := fs.String("user", "", "Account to map the share with, DOMAIN\\user or user@domain; empty for guest access")
				pwFile := fs.String("password-file", "", "The `file` holding the password, or - for stdin; without it the password is asked for on the terminal")
				return func(c *call) (*view, error) { return runSmbReconcile(c, *user, *pwFile) }
			},
		},
	}
}

// smbMappingsOf returns the node's SMB mappings group: client.Client and
// inprocess.Node both have it, groups.Node does not.
func smbMappingsOf(n groups.Node) (smbmappings.Interface, error) {
	if h, ok := n.(interface{ SMBMappings() smbmappings.Interface }); ok {
		return h.SMBMappings(), nil
	}
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "this node has no SMB mappings group")
}

func toMappingOutputs(ms []*smbmappings.SmbGlobalMapping) []smbMappingOutput {
	out := []smbMappingOutput{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		links := m.Links
		if links == nil {
			links = []string{}
		}
		out = append(out, smbMappingOutput{RemotePath: m.RemotePath, Status: m.Status, Links: links, AgeSeconds: m.AgeSeconds, AgeIsFirstSeen: m.AgeIsFirstSeen})
	}
	return out
}

// ageString renders an age for the table; "+" marks an age counted from
// when the proxy first saw the mapping.
func ageString(m smbMappingOutput) string {
	if m.Status == smbmappings.StatusMissing {
		return "-"
	}
	s := (time.Duration(m.AgeSeconds) * time.Second).String()
	if m.AgeIsFirstSeen {
		s += "+"
	}
	return s
}

// mappingRows renders mappings as table rows: one per link, so that a
// share with several volumes shows each.
func mappingRows(ms []smbMappingOutput) [][]string {
	var rows [][]string
	for _, m := range ms {
		if len(m.Links) == 0 {
			rows = append(rows, []string{m.RemotePath, m.Status, ageString(m), "0", "-"})
			continue
		}
		for _, l := range m.Links {
			rows = append(rows, []string{m.RemotePath, m.Status, ageString(m), strconv.Itoa(len(m.Links)), l})
		}
	}
	return rows
}

var mappingHeader = []string{"REMOTE", "STATUS", "AGE", "LINKS", "LINK"}

func runSmbList(c *call) (*view, error) {
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	g, err := smbMappingsOf(n)
	if err != nil {
		return nil, err
	}
	r, err := g.ListSmbGlobalMappings(c.ctx, &smbmappings.ListSmbGlobalMappingsRequest{})
	if err != nil {
		return nil, err
	}
	out := smbListOutput{Mappings: toMappingOutputs(r.Mappings)}
	return &view{json: out, header: mappingHeader, rows: mappingRows(out.Mappings)}, nil
}

func runSmbGC(c *call, apply bool, grace time.Duration) (*view, error) {
	if grace < time.Second || grace > smbmappings.MaxGraceSeconds*time.Second {
		return nil, usagef("--grace %s: want 1s to %s", grace, smbmappings.MaxGraceSeconds*time.Second)
	}
	var n groups.Node
	var err error
	if apply {
		n, err = c.confirmConnect("remove every SMB global mapping that no link under the working directories uses and that is older than " + grace.String())
	} else {
		n, err = c.connect()
	}
	if err != nil {
		return nil, err
	}
	g, err := smbMappingsOf(n)
	if err != nil {
		return nil, err
	}
	r, err := g.CollectSmbGlobalMappings(c.ctx, &smbmappings.CollectSmbGlobalMappingsRequest{DryRun: !apply, GraceSeconds: int64(grace / time.Second)})
	if err != nil {
		return nil, err
	}
	out := smbGCOutput{DryRun: !apply, Removed: toMappingOutputs(r.Removed), KeptYoung: toMappingOutputs(r.KeptYoung)}
	verb := "removed"
	if !apply {
		verb = "would remove (dry run; --apply removes)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d unreferenced mapping(s)", verb, len(out.Removed))
	for _, m := range out.Removed {
		fmt.Fprintf(&b, "\n  %s (%s, %s)", m.RemotePath, m.Status, ageString(m))
	}
	if len(out.KeptYoung) > 0 {
		fmt.Fprintf(&b, "\nkept %d younger than %s:", len(out.KeptYoung), grace)
		for _, m := range out.KeptYoung {
			fmt.Fprintf(&b, "\n  %s (%s, %s)", m.RemotePath, m.Status, ageString(m))
		}
	}
	return &view{json: out, message: b.String()}, nil
}

func runSmbReconcile(c *call, user, pwFile string) (*view, error) {
	remote := c.args[0]
	password, err := c.smbPassword(user, pwFile)
	if err != nil {
		return nil, err
	}
	n, err := c.confirmConnect("re-create the node's mapping of " + remote + " if links use it and it is not OK")
	if err != nil {
		return nil, err
	}
	g, err := smbMappingsOf(n)
	if err != nil {
		return nil, err
	}
	r, err := g.ReconcileSmbGlobalMapping(c.ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: remote, Username: user, Password: password})
	if err != nil {
		return nil, err
	}
	links := r.Links
	if links == nil {
		links = []string{}
	}
	out := smbReconcileOutput{RemotePath: r.RemotePath, Action: r.Action, PreviousStatus: r.PreviousStatus, Links: links}
	msg := fmt.Sprintf("%s: %s (was %s, %d link(s))", r.RemotePath, strings.ToLower(r.Action), r.PreviousStatus, len(links))
	return &view{json: out, message: msg}, nil
}
