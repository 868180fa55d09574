package main

import (
	"flag"

	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
)

// smbOutput is what the smb commands print. The password is never part of
// it.
type smbOutput struct {
	RemotePath string `json:"remote_path" doc:"the share path asked for"`
	LocalPath  string `json:"local_path" doc:"map: the link made to it; empty if none was asked for, and for unmap"`
	Username   string `json:"username" doc:"map: the account it was mapped with; empty for guest access, and for unmap"`
	Action     string `json:"action" doc:"what was done: mapped or unmapped"`
}

var smbRemoteArg = argSpec{name: "REMOTE", help: `the share, \\server\share, or a path below it`, check: checkRemote}

// smbCommands are the SMB group's commands.
func smbCommands() []command {
	return []command{
		{
			group: "smb", name: "map", args: []argSpec{smbRemoteArg, {name: "LOCAL", help: "a path inside the working directories to link to REMOTE", optional: true, check: checkHostPath}},
			summary: "Map an SMB share for the whole node", mutating: true,
			about: `Calls NewSmbGlobalMapping: maps REMOTE's share for the node with --user and
the password, and with LOCAL makes LOCAL a link to REMOTE. An existing healthy
mapping is reused; a stale one is re-created.

The password is never a command-line argument (every user of the node can
read those): --password-file names a file holding it (one trailing newline
is ignored), --password-file - reads it from stdin, and without the flag it
is asked for on the terminal without echo. It is never printed. Without
--user the share is mapped for guest access, without a password.`,
			example: `csi-node-proxyctl smb map '\\fileserver\share\pvc-1' 'C:\var\lib\kubelet\pods\p1\volumes\v\mount' --user 'CONTOSO\csi' --password-file /etc/csi/smb-password --yes
printf '%s\n' "$SMB_PASSWORD" | csi-node-proxyctl smb map '\\fileserver\share' --user 'CONTOSO\csi' --password-file - --yes`,
			exits:  []int{exitNotFound, exitInvalid},
			output: smbOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				user := fs.String("user", "", "Account to map the share with, DOMAIN\\user or user@domain; empty for guest access")
				pwFile := fs.String("password-file", "", "The `file` holding the password, or - for stdin; without it the password is asked for on the terminal")
				return func(c *call) (*view, error) { return runSmbMap(c, *user, *pwFile) }
			},
		},
		{
			group: "smb", name: "unmap", args: []argSpec{smbRemoteArg},
			summary: "Remove the node's mapping of an SMB share", mutating: true,
			about: `Calls RemoveSmbGlobalMapping for REMOTE's share. A link made by smb map
stays; remove it with fs rmdir.`,
			example: `csi-node-proxyctl smb unmap '\\fileserver\share' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  smbOutput{},
			flags:   noFlags(runSmbUnmap),
		},
	}
}

// smbPassword reads user's password as --password-file says (a prompt
// without it); guest access (no user) has none, and a password file
// without a user is a usage error. smb map and smb reconcile read it
// alike.
func (c *call) smbPassword(user, pwFile string) (string, error) {
	switch {
	case user == "" && pwFile != "":
		return "", usagef("--password-file needs --user: guest access has no password")
	case user != "":
		return c.readSecret(pwFile, "password-file", "password for "+user)
	}
	return "", nil
}

func runSmbMap(c *call, user, pwFile string) (*view, error) {
	remote := c.args[0]
	local := ""
	if len(c.args) > 1 {
		local = c.args[1]
	}
	password, err := c.smbPassword(user, pwFile)
	if err != nil {
		return nil, err
	}
	what := "map " + remote + " for the whole node"
	if user != "" {
		what += " as " + user
	} else {
		what += " for guest access"
	}
	if local != "" {
		what += " and link " + local + " to it"
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	req := &smb.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: user, Password: password}
	if _, err := n.SMB().NewSmbGlobalMapping(c.ctx, req); err != nil {
		return nil, err
	}
	msg := remote + " is mapped"
	if local != "" {
		msg += "; " + local + " links to it"
	}
	return &view{json: smbOutput{RemotePath: remote, LocalPath: local, Username: user, Action: "mapped"}, message: msg}, nil
}

func runSmbUnmap(c *call) (*view, error) {
	remote := c.args[0]
	n, err := c.confirmConnect("remove the node's mapping of " + remote)
	if err != nil {
		return nil, err
	}
	if _, err := n.SMB().RemoveSmbGlobalMapping(c.ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: remote}); err != nil {
		return nil, err
	}
	return &view{json: smbOutput{RemotePath: remote, Action: "unmapped"}, message: remote + " is unmapped"}, nil
}
