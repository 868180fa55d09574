package main

import (
	"cmp"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// portalOutput is a target portal in JSON.
type portalOutput struct {
	Address string `json:"address" doc:"the portal's address (IP address or host name)"`
	Port    uint32 `json:"port" doc:"the portal's TCP port; 0 means the default, 3260"`
}

// iscsiPortalsOutput is "iscsi portals -o json".
type iscsiPortalsOutput struct {
	Portals []portalOutput `json:"portals" doc:"the registered portals, sorted by address and port"`
}

// iscsiTargetsOutput is "iscsi targets -o json".
type iscsiTargetsOutput struct {
	Portal portalOutput `json:"portal" doc:"the portal asked"`
	IQNs   []string     `json:"iqns" doc:"the target IQNs it offers, sorted"`
}

// iscsiDisksOutput is "iscsi disks -o json".
type iscsiDisksOutput struct {
	Portal      portalOutput `json:"portal" doc:"the target's portal"`
	IQN         string       `json:"iqn" doc:"the target"`
	DiskNumbers []uint32     `json:"disk_numbers" doc:"the disk numbers of the target's LUNs, sorted"`
}

// iscsiChangeOutput is what the iscsi commands that change the initiator
// print. Secrets are never part of it.
type iscsiChangeOutput struct {
	Action   string        `json:"action" doc:"what was done: portal-added, portal-removed, connected, disconnected or mutual-secret-set"`
	Portal   *portalOutput `json:"portal" doc:"the portal; null for set-mutual-secret"`
	IQN      string        `json:"iqn" doc:"the target (connect, disconnect); empty otherwise"`
	AuthType string        `json:"auth_type" doc:"connect: NONE, ONE_WAY_CHAP or MUTUAL_CHAP; empty otherwise"`
}

var (
	portalArg = argSpec{name: "PORTAL", help: "the portal, ADDRESS or ADDRESS:PORT ([IPv6]:PORT); the port defaults to 3260"}
	iqnArg    = argSpec{name: "IQN", help: "the target's iSCSI qualified name, iqn.YYYY-MM.reverse.domain:name", check: checkIQN}
)

// portalFlag defines the --portal flag of the commands that name a target.
func portalFlag(fs *flag.FlagSet) *string {
	return fs.String("portal", "", "The target's `portal`, ADDRESS or ADDRESS:PORT ([IPv6]:PORT); the port defaults to 3260")
}

// portalOnly is the flags function of a command whose one flag is
// --portal.
func portalOnly(run func(c *call, portal string) (*view, error)) func(*flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		portal := portalFlag(fs)
		return func(c *call) (*view, error) { return run(c, *portal) }
	}
}

// target is what the commands on one target are given: its IQN (the
// argument) and its portal (--portal).
func (c *call) target(portalArg string) (string, *iscsi.TargetPortal, error) {
	tp, err := parsePortal(portalArg)
	return c.args[0], tp, err
}

// parsePortal splits ADDRESS[:PORT]. The address itself is checked by the
// proxy (exit 6); only the port's syntax is the CLI's business (exit 2).
func parsePortal(s string) (*iscsi.TargetPortal, error) {
	if s == "" {
		return nil, usagef("the portal is empty: want ADDRESS or ADDRESS:PORT")
	}
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "[") && strings.Contains(s, "]:"):
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return nil, usagef("portal %q: %v", s, err)
		}
		host, port = h, p
	case strings.Count(s, ":") == 1:
		host, port, _ = strings.Cut(s, ":")
	}
	tp := &iscsi.TargetPortal{TargetAddress: host}
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return nil, usagef("portal %q: port %q is not a TCP port (1 to 65535)", s, port)
		}
		tp.TargetPort = uint32(n)
	}
	return tp, nil
}

// portalString renders a portal as ADDRESS:PORT, with the default port
// spelt out.
func portalString(p portalOutput) string {
	port := p.Port
	if port == 0 {
		port = iscsi.DefaultPort
	}
	return net.JoinHostPort(strings.Trim(p.Address, "[]"), strconv.FormatUint(uint64(port), 10))
}

// toPortalOutput converts a model portal.
func toPortalOutput(p *iscsi.TargetPortal) portalOutput {
	return portalOutput{Address: p.TargetAddress, Port: p.TargetPort}
}

// authTypes are the --auth values.
var authTypes = map[string]iscsi.AuthenticationType{
	"none":         iscsi.AuthNone,
	"one-way-chap": iscsi.AuthOneWayCHAP,
	"mutual-chap":  iscsi.AuthMutualCHAP,
}

// iscsiCommands are the iSCSI group's commands.
func iscsiCommands() []command {
	return []command{
		{
			group: "iscsi", name: "portals",
			summary: "List the registered target portals",
			about:   `Calls ListTargetPortals.`,
			example: `csi-node-proxyctl iscsi portals`,
			output:  iscsiPortalsOutput{},
			flags:   noFlags(runIscsiPortals),
		},
		{
			group: "iscsi", name: "targets",
			summary:  "List the targets a portal offers",
			about:    `Calls DiscoverTargetPortal for --portal.`,
			example:  `csi-node-proxyctl iscsi targets --portal 10.0.0.10:3260`,
			exits:    []int{exitNotFound, exitInvalid},
			output:   iscsiTargetsOutput{},
			required: []string{"portal"},
			flags:    portalOnly(runIscsiTargets),
		},
		{
			group: "iscsi", name: "add-portal", args: []argSpec{portalArg},
			summary: "Register a target portal", mutating: true,
			about:   `Calls AddTargetPortal. A portal registered already is success.`,
			example: `csi-node-proxyctl iscsi add-portal 10.0.0.10 --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  iscsiChangeOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runIscsiPortalChange(c, true) }),
		},
		{
			group: "iscsi", name: "remove-portal", args: []argSpec{portalArg},
			summary: "Unregister a target portal", mutating: true,
			about:   `Calls RemoveTargetPortal.`,
			example: `csi-node-proxyctl iscsi remove-portal 10.0.0.10:3260 --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  iscsiChangeOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runIscsiPortalChange(c, false) }),
		},
		{
			group: "iscsi", name: "connect", args: []argSpec{iqnArg},
			summary: "Log in to a target", mutating: true,
			about: `Calls ConnectTarget: logs in to IQN at --portal, with CHAP when --auth asks
for it. An existing session is success.

The CHAP secret is never a command-line argument (every user of the node can
read those): --chap-secret-file names a file holding it (one trailing newline
is ignored), --chap-secret-file - reads it from stdin, and without the flag it
is asked for on the terminal without echo. It is never printed.`,
			example: `csi-node-proxyctl iscsi connect iqn.2003-01.org.example:open --portal 10.0.0.10 --yes
csi-node-proxyctl iscsi connect iqn.2003-01.org.example:target1 --portal 10.0.0.10 --auth one-way-chap --chap-user initiator --chap-secret-file /etc/csi/chap --yes`,
			exits:    []int{exitNotFound, exitInvalid},
			output:   iscsiChangeOutput{},
			required: []string{"portal"},
			flags: func(fs *flag.FlagSet) runFunc {
				portal := portalFlag(fs)
				auth := fs.String("auth", "none", "Authentication: none, one-way-chap or mutual-chap")
				user := fs.String("chap-user", "", "CHAP user name (with one-way-chap or mutual-chap)")
				secretFile := fs.String("chap-secret-file", "", "The `file` holding the CHAP secret, or - for stdin; without it the secret is asked for on the terminal (with one-way-chap or mutual-chap)")
				return func(c *call) (*view, error) { return runIscsiConnect(c, *portal, *auth, *user, *secretFile) }
			},
		},
		{
			group: "iscsi", name: "disconnect", args: []argSpec{iqnArg},
			summary: "Log out of a target", mutating: true,
			about:    `Calls DisconnectTarget. No session is success.`,
			example:  `csi-node-proxyctl iscsi disconnect iqn.2003-01.org.example:open --portal 10.0.0.10 --yes`,
			exits:    []int{exitNotFound, exitInvalid},
			output:   iscsiChangeOutput{},
			required: []string{"portal"},
			flags:    portalOnly(runIscsiDisconnect),
		},
		{
			group: "iscsi", name: "disks", args: []argSpec{iqnArg},
			summary: "List the disks of a connected target's LUNs",
			about: `Calls GetTargetDisks: the disk numbers the target's LUNs have while a session
is connected; use them with disk and volume commands.`,
			example:  `csi-node-proxyctl iscsi disks iqn.2003-01.org.example:open --portal 10.0.0.10 -o json | jq '.disk_numbers[]'`,
			exits:    []int{exitNotFound, exitInvalid},
			output:   iscsiDisksOutput{},
			required: []string{"portal"},
			flags:    portalOnly(runIscsiDisks),
		},
		{
			group: "iscsi", name: "set-mutual-secret",
			summary: "Set the initiator's mutual CHAP secret", mutating: true,
			about: `Calls SetMutualChapSecret: the secret targets prove themselves with when a
login asks for mutual CHAP. Read like connect's secret: --secret-file FILE,
--secret-file - for stdin, or typed on the terminal without echo; never
printed.`,
			example: `csi-node-proxyctl iscsi set-mutual-secret --secret-file /etc/csi/mutual-chap --yes`,
			exits:   []int{exitInvalid},
			output:  iscsiChangeOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				secretFile := fs.String("secret-file", "", "The `file` holding the mutual CHAP secret, or - for stdin; without it the secret is asked for on the terminal")
				return func(c *call) (*view, error) { return runIscsiSetMutual(c, *secretFile) }
			},
		},
	}
}

func runIscsiPortals(c *call) (*view, error) {
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.ISCSI().ListTargetPortals(c.ctx, &iscsi.ListTargetPortalsRequest{})
	if err != nil {
		return nil, err
	}
	out := iscsiPortalsOutput{Portals: []portalOutput{}}
	for _, p := range r.TargetPortals {
		if p != nil {
			out.Portals = append(out.Portals, toPortalOutput(p))
		}
	}
	slices.SortFunc(out.Portals, func(a, b portalOutput) int {
		return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
	})
	v := &view{json: out, header: []string{"PORTAL", "ADDRESS", "PORT"}}
	for _, p := range out.Portals {
		v.rows = append(v.rows, []string{portalString(p), p.Address, strconv.FormatUint(uint64(p.Port), 10)})
	}
	return v, nil
}

func runIscsiTargets(c *call, portalArg string) (*view, error) {
	tp, err := parsePortal(portalArg)
	if err != nil {
		return nil, err
	}
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.ISCSI().DiscoverTargetPortal(c.ctx, &iscsi.DiscoverTargetPortalRequest{TargetPortal: tp})
	if err != nil {
		return nil, err
	}
	out := iscsiTargetsOutput{Portal: toPortalOutput(tp), IQNs: slices.Sorted(slices.Values(r.IQNs))}
	if out.IQNs == nil {
		out.IQNs = []string{}
	}
	v := &view{json: out, header: []string{"PORTAL", "IQN"}}
	for _, iqn := range out.IQNs {
		v.rows = append(v.rows, []string{portalString(out.Portal), iqn})
	}
	return v, nil
}

func runIscsiPortalChange(c *call, add bool) (*view, error) {
	tp, err := parsePortal(c.args[0])
	if err != nil {
		return nil, err
	}
	p := toPortalOutput(tp)
	what, action := "register the target portal "+portalString(p), "portal-added"
	if !add {
		what, action = "unregister the target portal "+portalString(p), "portal-removed"
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	if add {
		_, err = n.ISCSI().AddTargetPortal(c.ctx, &iscsi.AddTargetPortalRequest{TargetPortal: tp})
	} else {
		_, err = n.ISCSI().RemoveTargetPortal(c.ctx, &iscsi.RemoveTargetPortalRequest{TargetPortal: tp})
	}
	if err != nil {
		return nil, err
	}
	// The words of the JSON action: portal-added, portal-removed.
	msg := "portal " + portalString(p) + " is added"
	if !add {
		msg = "portal " + portalString(p) + " is removed"
	}
	return &view{json: iscsiChangeOutput{Action: action, Portal: &p}, message: msg}, nil
}

func runIscsiConnect(c *call, portalArg, authArg, user, secretFile string) (*view, error) {
	iqn, tp, err := c.target(portalArg)
	if err != nil {
		return nil, err
	}
	auth, ok := authTypes[authArg]
	if !ok {
		return nil, usagef("--auth %q: want none, one-way-chap or mutual-chap", authArg)
	}
	req := &iscsi.ConnectTargetRequest{TargetPortal: tp, IQN: iqn, AuthType: auth, ChapUsername: user}
	if auth == iscsi.AuthNone {
		if user != "" || secretFile != "" {
			return nil, usagef("--chap-user and --chap-secret-file need --auth one-way-chap or mutual-chap")
		}
	} else if req.ChapSecret, err = c.readSecret(secretFile, "chap-secret-file", "CHAP secret for "+iqn); err != nil {
		return nil, err
	}
	p := toPortalOutput(tp)
	n, err := c.confirmConnect("log in to " + iqn + " at " + portalString(p) + " (" + auth.String() + ")")
	if err != nil {
		return nil, err
	}
	done := c.progress("Logging in to " + iqn)
	_, err = n.ISCSI().ConnectTarget(c.ctx, req)
	done()
	if err != nil {
		return nil, err
	}
	return &view{
		json:    iscsiChangeOutput{Action: "connected", Portal: &p, IQN: iqn, AuthType: auth.String()},
		message: iqn + " at " + portalString(p) + " is connected",
	}, nil
}

func runIscsiDisconnect(c *call, portalArg string) (*view, error) {
	iqn, tp, err := c.target(portalArg)
	if err != nil {
		return nil, err
	}
	p := toPortalOutput(tp)
	n, err := c.confirmConnect("log out of " + iqn + " at " + portalString(p))
	if err != nil {
		return nil, err
	}
	if _, err := n.ISCSI().DisconnectTarget(c.ctx, &iscsi.DisconnectTargetRequest{TargetPortal: tp, IQN: iqn}); err != nil {
		return nil, err
	}
	return &view{
		json:    iscsiChangeOutput{Action: "disconnected", Portal: &p, IQN: iqn},
		message: iqn + " at " + portalString(p) + " is disconnected",
	}, nil
}

func runIscsiDisks(c *call, portalArg string) (*view, error) {
	iqn, tp, err := c.target(portalArg)
	if err != nil {
		return nil, err
	}
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.ISCSI().GetTargetDisks(c.ctx, &iscsi.GetTargetDisksRequest{TargetPortal: tp, IQN: iqn})
	if err != nil {
		return nil, err
	}
	out := iscsiDisksOutput{Portal: toPortalOutput(tp), IQN: iqn, DiskNumbers: []uint32{}}
	for _, id := range r.DiskIDs {
		d, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			// The model promises decimal strings; anything else is a
			// proxy bug worth seeing, not a number to guess.
			return nil, fmt.Errorf("the proxy reported disk %q, which is not a disk number", id)
		}
		out.DiskNumbers = append(out.DiskNumbers, uint32(d))
	}
	slices.Sort(out.DiskNumbers)
	v := &view{json: out, header: []string{"PORTAL", "IQN", "DISK"}}
	for _, d := range out.DiskNumbers {
		v.rows = append(v.rows, []string{portalString(out.Portal), iqn, fmtUint(d)})
	}
	return v, nil
}

func runIscsiSetMutual(c *call, secretFile string) (*view, error) {
	secret, err := c.readSecret(secretFile, "secret-file", "mutual CHAP secret")
	if err != nil {
		return nil, err
	}
	n, err := c.confirmConnect("set the initiator's mutual CHAP secret")
	if err != nil {
		return nil, err
	}
	if _, err := n.ISCSI().SetMutualChapSecret(c.ctx, &iscsi.SetMutualChapSecretRequest{MutualChapSecret: secret}); err != nil {
		return nil, err
	}
	return &view{json: iscsiChangeOutput{Action: "mutual-secret-set"}, message: "the mutual CHAP secret is set"}, nil
}
