package main

import (
	"flag"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
)

// fsExistsOutput is "fs exists -o json".
type fsExistsOutput struct {
	Path   string `json:"path" doc:"the path asked for"`
	Exists bool   `json:"exists" doc:"whether it exists (a link counts itself, not its target)"`
}

// fsSymlinkOutput is "fs is-symlink -o json".
type fsSymlinkOutput struct {
	Path      string `json:"path" doc:"the path asked for"`
	IsSymlink bool   `json:"is_symlink" doc:"whether it is a symlink or mount point whose target exists"`
}

// fsChangeOutput is what the fs commands that change a path print.
type fsChangeOutput struct {
	Path   string `json:"path" doc:"the path changed (for symlink: the link)"`
	Action string `json:"action" doc:"what was done: created, removed, emptied or linked"`
	Target string `json:"target" doc:"for symlink: the directory the link points to; empty otherwise"`
}

// fsPathArg is the PATH argument of the fs commands.
var fsPathArg = argSpec{name: "PATH", help: "a path inside the proxy's working directories, in the host's syntax", check: checkHostPath}

// fsCommands are the filesystem group's commands (group "fs").
func fsCommands() []command {
	return []command{
		{
			group: "fs", name: "exists", args: []argSpec{fsPathArg},
			summary: "Tell whether a path exists",
			about: `Calls PathExists, which does not follow a link. A path that exists exits 0;
one that does not exits 3 (not found) after printing false, so a script can
write: if csi-node-proxyctl fs exists PATH; then ...`,
			example: `csi-node-proxyctl fs exists 'C:\var\lib\kubelet\plugins'
if csi-node-proxyctl fs exists 'C:\var\lib\kubelet\x' -o json >/dev/null; then echo there; fi`,
			exits:  []int{exitNotFound, exitInvalid},
			output: fsExistsOutput{},
			flags:  noFlags(runFsExists),
		},
		{
			group: "fs", name: "is-symlink", args: []argSpec{fsPathArg},
			summary: "Tell whether a path is a symlink or mount point",
			about: `Calls IsSymlink: true for a symlink or mount point whose target exists. Both
answers exit 0; a path that does not exist is not found (exit 3).`,
			example: `csi-node-proxyctl fs is-symlink 'C:\var\lib\kubelet\pods\p1\volumes\v\mount'`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  fsSymlinkOutput{},
			flags:   noFlags(runFsIsSymlink),
		},
		{
			group: "fs", name: "mkdir", args: []argSpec{fsPathArg},
			summary: "Create a directory and its missing parents", mutating: true,
			about:   `Calls Mkdir. A directory that exists already is success.`,
			example: `csi-node-proxyctl fs mkdir 'C:\var\lib\kubelet\plugins\my-driver' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  fsChangeOutput{},
			flags:   noFlags(runFsMkdir),
		},
		{
			group: "fs", name: "rmdir", args: []argSpec{fsPathArg},
			summary: "Remove a directory (with --force, a whole tree)", mutating: true,
			about: `Calls Rmdir. Without --force the directory must be empty, and a path that
does not exist is not found (exit 3); with --force the whole tree goes and a
missing path is success. A symlink or mount point is removed itself, never
what it points to.`,
			example: `csi-node-proxyctl fs rmdir 'C:\var\lib\kubelet\plugins\old' --force --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  fsChangeOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				force := fs.Bool("force", false, "Remove the directory with everything in it; a missing path is success")
				return func(c *call) (*view, error) { return runFsRmdir(c, *force) }
			},
		},
		{
			group: "fs", name: "rmdir-contents", args: []argSpec{fsPathArg},
			summary: "Remove everything inside a directory, keeping it", mutating: true,
			about:   `Calls RmdirContents.`,
			example: `csi-node-proxyctl fs rmdir-contents 'C:\var\lib\kubelet\plugins\my-driver\tmp' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  fsChangeOutput{},
			flags:   noFlags(runFsRmdirContents),
		},
		{
			group: "fs", name: "symlink", args: []argSpec{{name: "SOURCE", help: "the existing directory the link points to", check: checkHostPath}, {name: "LINK", help: "the link to create", check: checkHostPath}},
			summary: "Create a symlink to a directory", mutating: true,
			about: `Calls CreateSymlink: LINK becomes a link to SOURCE. Both must be inside the
working directories.`,
			example: `csi-node-proxyctl fs symlink 'C:\var\lib\kubelet\staging\pv1' 'C:\var\lib\kubelet\pods\p1\volumes\v\mount' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  fsChangeOutput{},
			flags:   noFlags(runFsSymlink),
		},
	}
}

func runFsExists(c *call) (*view, error) {
	path := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.Filesystem().PathExists(c.ctx, &filesystem.PathExistsRequest{Path: path})
	if err != nil {
		return nil, err
	}
	v := &view{json: fsExistsOutput{Path: path, Exists: r.Exists}, header: []string{"PATH", "EXISTS"}, rows: [][]string{{path, yesNo(r.Exists)}}}
	if !r.Exists {
		return v, &statusError{code: exitNotFound, msg: path + " does not exist"}
	}
	return v, nil
}

func runFsIsSymlink(c *call) (*view, error) {
	path := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.Filesystem().IsSymlink(c.ctx, &filesystem.IsSymlinkRequest{Path: path})
	if err != nil {
		return nil, err
	}
	return &view{json: fsSymlinkOutput{Path: path, IsSymlink: r.IsSymlink}, header: []string{"PATH", "SYMLINK"}, rows: [][]string{{path, yesNo(r.IsSymlink)}}}, nil
}

func runFsMkdir(c *call) (*view, error) {
	path := c.args[0]
	n, err := c.confirmConnect("create the directory " + path)
	if err != nil {
		return nil, err
	}
	if _, err := n.Filesystem().Mkdir(c.ctx, &filesystem.MkdirRequest{Path: path}); err != nil {
		return nil, err
	}
	return &view{json: fsChangeOutput{Path: path, Action: "created"}, message: path + " is created"}, nil
}

func runFsRmdir(c *call, force bool) (*view, error) {
	path := c.args[0]
	what := "remove the empty directory " + path
	if force {
		what = "remove " + path + " and everything in it"
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	if _, err := n.Filesystem().Rmdir(c.ctx, &filesystem.RmdirRequest{Path: path, Force: force}); err != nil {
		return nil, err
	}
	return &view{json: fsChangeOutput{Path: path, Action: "removed"}, message: path + " is removed"}, nil
}

func runFsRmdirContents(c *call) (*view, error) {
	path := c.args[0]
	n, err := c.confirmConnect("remove everything inside " + path)
	if err != nil {
		return nil, err
	}
	if _, err := n.Filesystem().RmdirContents(c.ctx, &filesystem.RmdirContentsRequest{Path: path}); err != nil {
		return nil, err
	}
	return &view{json: fsChangeOutput{Path: path, Action: "emptied"}, message: path + " is emptied"}, nil
}

func runFsSymlink(c *call) (*view, error) {
	source, link := c.args[0], c.args[1]
	n, err := c.confirmConnect("create the link " + link + " pointing to " + source)
	if err != nil {
		return nil, err
	}
	if _, err := n.Filesystem().CreateSymlink(c.ctx, &filesystem.CreateSymlinkRequest{SourcePath: source, TargetPath: link}); err != nil {
		return nil, err
	}
	return &view{json: fsChangeOutput{Path: link, Action: "linked", Target: source}, message: link + " is linked to " + source}, nil
}
