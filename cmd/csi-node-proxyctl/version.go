package main

import (
	"context"
	"flag"
	"slices"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// cliInfo is the CLI's own build identity in JSON.
type cliInfo struct {
	Version   string `json:"version" doc:"release version (dev for an unstamped build)"`
	Commit    string `json:"commit" doc:"Git commit the CLI was built from"`
	BuildDate string `json:"build_date" doc:"when it was built, UTC, RFC 3339 (unknown if not stamped)"`
	GoVersion string `json:"go_version" doc:"Go version it was built with"`
}

// groupVersions is one group's row in "version" and "health".
type groupVersions struct {
	Group      string   `json:"group" doc:"API group: disk, volume, filesystem, smb, iscsi or system"`
	Served     []string `json:"served" doc:"the versions of the group served, newest first; with --local [\"inprocess\"], library mode having no wire versions"`
	Negotiated string   `json:"negotiated" doc:"the version the CLI uses for the group, the newest both sides have; empty if none; inprocess with --local"`
}

// versionOutput is "version -o json".
type versionOutput struct {
	CLI    cliInfo         `json:"cli" doc:"this CLI's build"`
	Daemon string          `json:"daemon" doc:"the daemon's build as its health answers name it (csi-node-proxy VERSION (commit ..., built ..., goX)); empty for upstream csi-proxy, which does not say, and with --local"`
	Mode   string          `json:"mode" doc:"daemon, or local with --local"`
	Where  string          `json:"where" doc:"the daemon's socket directory (Linux), the pipe prefix (Windows), or the host backend with --local"`
	Groups []groupVersions `json:"groups" doc:"every API group, in the order disk, filesystem, iscsi, smb, system, volume"`
}

// healthOutput is "health -o json".
type healthOutput struct {
	Healthy bool            `json:"healthy" doc:"true when every group asked for is served"`
	Mode    string          `json:"mode" doc:"daemon, or local with --local"`
	Missing []string        `json:"missing" doc:"the groups asked for that are not served (empty when healthy)"`
	Groups  []groupVersions `json:"groups" doc:"the groups asked for"`
}

// apiGroups are the API groups as the client names them, sorted by name.
func apiGroups() []string {
	gs := client.KnownGroups()
	slices.Sort(gs)
	return gs
}

// apiGroup maps a CLI group to the API group it calls: the CLI says "fs"
// where the API says "filesystem".
func apiGroup(cliGroup string) string {
	if cliGroup == "fs" {
		return "filesystem"
	}
	return cliGroup
}

// topCommands are the commands outside the groups: version and health.
func topCommands() []command {
	return []command{
		{
			name:    "version",
			summary: "Show the CLI's version and the API versions the daemon serves",
			about: `Prints the CLI's version, commit, build date and Go version, and for each API
group the versions the daemon serves (each endpoint answering a gRPC health
check) and the one the CLI negotiates: the newest both sides have. When no
endpoint answers at all it still prints the CLI's version, then exits 5. With
--local the calls run in-process, where every group is available as version
"inprocess" and nothing is negotiated.`,
			example: `csi-node-proxyctl version
csi-node-proxyctl version -o json | jq -r '.groups[] | "\(.group) \(.negotiated)"'`,
			output: versionOutput{},
			flags:  noFlags(runVersion),
		},
		{
			name:    "health",
			summary: "Check that the daemon serves every group (or those asked for)",
			about: `Probes every endpoint the CLI knows with the gRPC health service and lists,
per group, the versions that answer SERVING. Exits 0 when every group asked
for (--group; default all six) has at least one, 5 otherwise, so it can be a
readiness check. With --local it builds the in-process node instead and
reports every group served when that works.`,
			example: `csi-node-proxyctl health
csi-node-proxyctl health --group disk,volume -o json | jq .healthy`,
			output: healthOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				var want commaList
				fs.Var(&want, "group", "API `group` that must be served: disk, volume, filesystem, smb, iscsi or system (repeatable, or a comma-separated list; default all)")
				return func(c *call) (*view, error) { return runHealth(c, want) }
			},
		},
	}
}

// servedGroups returns, for each API group, the versions served and the
// negotiated one: probed on the daemon, or all in-process with --local.
func servedGroups(c *call) (mode, where string, rows []groupVersions, err error) {
	mode, where, rows, _, err = servedEndpoints(c)
	return mode, where, rows, err
}

// servedEndpoints is servedGroups with the endpoints that answered.
func servedEndpoints(c *call) (mode, where string, rows []groupVersions, served []client.GroupVersion, err error) {
	known := client.KnownVersions()
	if c.g.local {
		// Building the node proves the backend works; in-process every
		// group is there, without wire versions (inprocess.Version).
		if _, err := c.connect(); err != nil {
			return "", "", nil, nil, err
		}
		for _, g := range apiGroups() {
			rows = append(rows, groupVersions{Group: g, Served: []string{inprocess.Version}, Negotiated: inprocess.Version})
		}
		return "local", "host " + localHost(c.g), rows, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.g.timeout)
	defer cancel()
	served, err = client.Served(ctx, clientOptions(c.g))
	if err != nil {
		return "", "", nil, nil, &unavailableError{err: err, hint: unreachableHint(c.g)}
	}
	by := map[string][]string{}
	for _, gv := range served {
		by[gv.Group] = append(by[gv.Group], gv.Version)
	}
	for _, g := range apiGroups() {
		row := groupVersions{Group: g, Served: by[g]}
		if row.Served == nil {
			row.Served = []string{}
		}
		// Dial's choice, not a guess: the newest version both sides have,
		// in the client's order of preference.
		for _, v := range known[g] {
			if slices.Contains(row.Served, v) {
				row.Negotiated = v
				break
			}
		}
		rows = append(rows, row)
	}
	return "daemon", daemonWhere(c.g), rows, served, nil
}

func runVersion(c *call) (*view, error) {
	info := version.Get()
	mode, where, rows, served, err := servedEndpoints(c)
	if err != nil {
		return nil, err
	}
	out := versionOutput{
		CLI:  cliInfo{Version: info.Version, Commit: info.Commit, BuildDate: info.BuildDate, GoVersion: info.GoVersion},
		Mode: mode, Where: where, Groups: rows,
	}
	if len(served) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), c.g.timeout)
		defer cancel()
		out.Daemon = daemonBuild(ctx, c.g, served[0].Address)
	}
	if c.g.output == formatTable || c.g.output == formatWide {
		// The CLI's identity precedes the table, as "-version" prints it
		// for the daemon.
		say(c.app.stdout, "%s %s (commit %s, built %s, %s)\n%s: %s\n", progName, info.Version, info.Commit, info.BuildDate, info.GoVersion, mode, where)
		if out.Daemon != "" {
			say(c.app.stdout, "daemon build: %s\n", out.Daemon)
		}
		say(c.app.stdout, "\n")
	}
	v := &view{json: out, header: []string{"GROUP", "SERVED", "NEGOTIATED"}}
	for _, r := range rows {
		v.rows = append(v.rows, []string{r.Group, orDash(strings.Join(r.Served, ",")), orDash(r.Negotiated)})
	}
	if !slices.ContainsFunc(rows, func(r groupVersions) bool { return len(r.Served) > 0 }) {
		// The CLI's own version is printed, but a script asking "which
		// versions does the daemon serve" must not read "none" as success.
		return v, &statusError{code: exitUnavailable, msg: "no endpoint answers (" + where + ")"}
	}
	return v, nil
}

func runHealth(c *call, want []string) (*view, error) {
	for _, g := range want {
		if !slices.Contains(apiGroups(), g) {
			return nil, usagef("--group %q: want one of %s", g, strings.Join(apiGroups(), ", "))
		}
	}
	if len(want) == 0 {
		want = apiGroups()
	}
	mode, _, rows, err := servedGroups(c)
	if err != nil {
		return nil, err
	}
	out := healthOutput{Healthy: true, Mode: mode, Missing: []string{}, Groups: []groupVersions{}}
	v := &view{header: []string{"GROUP", "STATUS", "SERVED"}}
	for _, r := range rows {
		if !slices.Contains(want, r.Group) {
			continue
		}
		status := "ok"
		if len(r.Served) == 0 {
			status = "NOT SERVED"
			out.Healthy = false
			out.Missing = append(out.Missing, r.Group)
		}
		out.Groups = append(out.Groups, r)
		v.rows = append(v.rows, []string{r.Group, status, orDash(strings.Join(r.Served, ","))})
	}
	v.json = out
	if !out.Healthy {
		return v, &statusError{code: exitUnavailable, msg: "not served: " + strings.Join(out.Missing, ", ")}
	}
	return v, nil
}
