package manifests

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// flagToken is a command-line flag as the daemon's Go flag package reads it.
var flagToken = regexp.MustCompile(`^--?([A-Za-z0-9][A-Za-z0-9_.-]*)(=.*)?$`)

// flagsAssignment is a PowerShell or shell variable holding the daemon's
// flags, as `$flags = "-windows-service -v=2"` (upstream's install
// instructions use exactly this).
var flagsAssignment = regexp.MustCompile(`^\$?flags\s*=\s*"([^"]*)"`)

// CheckReadme checks the daemon command lines in a README's code blocks:
// every flag after the program name csi-node-proxy(.exe), up to the end of
// the command, and every flag in a "$flags = ..." line must be one of the
// daemon's. Only names are checked: documentation mixes in shell syntax
// and placeholders.
func CheckReadme(file string, d *Daemon) []error {
	data, err := os.ReadFile(file)
	if err != nil {
		return []error{err}
	}
	var errs []error
	check := func(n int, tok string) {
		tok = strings.Trim(tok, `"'`+"`")
		m := flagToken.FindStringSubmatch(tok)
		if m == nil {
			return
		}
		if _, ok := d.Flags[m[1]]; !ok {
			errs = append(errs, fmt.Errorf("%s:%d: %s is not a flag of csi-node-proxy (its flags: %s)", file, n, tok, d.flagList()))
		}
	}
	inCode := false
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			continue
		}
		line = strings.TrimSpace(line)
		if m := flagsAssignment.FindStringSubmatch(line); m != nil {
			for _, tok := range strings.Fields(m[1]) {
				check(n, tok)
			}
			continue
		}
		toks := strings.Fields(line)
		if len(toks) > 0 && toks[0] == "helm" {
			continue // csi-node-proxy there is a release or chart name
		}
		for j, tok := range toks {
			if !isDaemonBinary(strings.Trim(tok, `"'&`)) {
				continue
			}
			for _, arg := range toks[j+1:] {
				if strings.ContainsAny(arg, "|;>") || arg == "&&" || strings.HasPrefix(arg, "#") {
					break // the command ends
				}
				if !strings.HasPrefix(strings.Trim(arg, `"'`), "-") {
					continue // a variable or placeholder
				}
				check(n, arg)
			}
		}
	}
	return errs
}
