package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
)

// defaultMetricsAddress is where the deployments in deploy/ serve the
// daemon's metrics listener (-metrics-bind-address).
const defaultMetricsAddress = "localhost:29690"

// deprecatedPath is the daemon's read-only report of deprecated-version
// callers on its metrics listener (cmd/csi-node-proxy, /deprecated).
const deprecatedPath = "/deprecated"

// deprecatedRow is one caller in "deprecations".
type deprecatedRow struct {
	Group      string `json:"group" doc:"API group"`
	Version    string `json:"version" doc:"the deprecated version it calls"`
	Rule       string `json:"rule" doc:"the policy rule that allowed the calls; none without a policy"`
	Caller     string `json:"caller" doc:"who called: uid and gid, container, pod or Windows account, without the process ID"`
	Calls      uint64 `json:"calls" doc:"calls on the version since the daemon started"`
	LastMethod string `json:"last_method" doc:"the method of the latest call"`
	LastPID    int    `json:"last_pid" doc:"the process ID of the latest call; 0 when unknown"`
	FirstSeen  string `json:"first_seen" doc:"first call, UTC, RFC 3339"`
	LastSeen   string `json:"last_seen" doc:"latest call, UTC, RFC 3339"`
}

// deprecationsOutput is "deprecations -o json".
type deprecationsOutput struct {
	Address   string          `json:"address" doc:"the daemon's metrics listener asked"`
	Uses      []deprecatedRow `json:"uses" doc:"each caller of each deprecated version, by group, version, rule and caller; empty when none"`
	Untracked uint64          `json:"untracked" doc:"calls from callers beyond the daemon's bound of 256, counted but not listed"`
}

// deprecationsCommand is the "deprecations" command.
func deprecationsCommand() command {
	return command{
		name:    "deprecations",
		summary: "List the callers that still use API versions upstream deprecated",
		about: `Reads the daemon's report of calls on deprecated versions (a v1alpha* or v1beta*
of a group that has v1: disk, filesystem, smb, volume) since it started: which
caller, allowed by which policy rule, called which version how often. Drivers
listed here must move to v1 before an upgrade drops those versions. The report
is served on the daemon's metrics listener (-metrics-bind-address, at
/deprecated), not on its sockets or pipes, so --metrics-address must name it;
the same calls are counted in csi_node_proxy_deprecated_api_calls_total.
Exits 5 when the listener does not answer (metrics off, or another address).`,
		example: `csi-node-proxyctl deprecations
csi-node-proxyctl deprecations --metrics-address 127.0.0.1:9808 -o json | jq -r '.uses[] | "\(.rule) \(.group)/\(.version)"'`,
		output: deprecationsOutput{},
		flags: func(fs *flag.FlagSet) runFunc {
			addr := fs.String("metrics-address", defaultMetricsAddress, "The daemon's metrics listener, host:port, as its -metrics-bind-address")
			return func(c *call) (*view, error) { return runDeprecations(c, *addr) }
		},
	}
}

func runDeprecations(c *call, addr string) (*view, error) {
	if c.g.local {
		return nil, usagef("deprecations reads the daemon's report; with --local no daemon is involved")
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.g.timeout)
	defer cancel()
	rep, err := fetchDeprecations(ctx, addr)
	if err != nil {
		return nil, &unavailableError{err: err, hint: "is -metrics-bind-address set on the daemon? give its address with --metrics-address"}
	}
	out := deprecationsOutput{Address: addr, Uses: []deprecatedRow{}, Untracked: rep.Untracked}
	v := &view{header: []string{"GROUP", "VERSION", "RULE", "CALLER", "CALLS", "LAST_METHOD", "LAST_SEEN"}}
	for _, u := range rep.Uses {
		row := deprecatedRow{Group: u.Group, Version: u.Version, Rule: u.Rule, Caller: u.Caller, Calls: u.Calls,
			LastMethod: u.LastMethod, LastPID: u.LastPID,
			FirstSeen: u.FirstSeen.UTC().Format(time.RFC3339), LastSeen: u.LastSeen.UTC().Format(time.RFC3339)}
		out.Uses = append(out.Uses, row)
		v.rows = append(v.rows, []string{row.Group, row.Version, row.Rule, row.Caller, strconv.FormatUint(row.Calls, 10), row.LastMethod, row.LastSeen})
	}
	v.json = out
	return v, nil
}

// fetchDeprecations reads the report from the metrics listener at addr.
func fetchDeprecations(ctx context.Context, addr string) (server.DeprecatedReport, error) {
	var rep server.DeprecatedReport
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+deprecatedPath, nil)
	if err != nil {
		return rep, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rep, err
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end below; nothing to report
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return rep, err
	}
	if resp.StatusCode != http.StatusOK {
		return rep, fmt.Errorf("GET %s%s: %s", addr, deprecatedPath, resp.Status)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, errors.New("the answer at " + addr + deprecatedPath + " is not the daemon's report: " + err.Error())
	}
	return rep, nil
}
