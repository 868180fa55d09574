//go:build linux

package iscsiinit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// nodeAuth is the CHAP part of an open-iscsi node record.
type nodeAuth struct {
	method                 string // "None" or "CHAP"
	username, password     string // the initiator's credentials (one-way)
	usernameIn, passwordIn string // the target's credentials (mutual)
}

// authKeys are the record keys writeNodeAuth owns. chap_algs is left to
// open-iscsi.
var authKeys = map[string]bool{
	"node.session.auth.authmethod":  true,
	"node.session.auth.username":    true,
	"node.session.auth.password":    true,
	"node.session.auth.username_in": true,
	"node.session.auth.password_in": true,
}

// lines renders the record lines for a.
func (a nodeAuth) lines() []string {
	out := []string{"node.session.auth.authmethod = " + a.method}
	if a.method != "CHAP" {
		return out
	}
	out = append(out,
		"node.session.auth.username = "+a.username,
		"node.session.auth.password = "+a.password)
	if a.passwordIn != "" {
		out = append(out,
			"node.session.auth.username_in = "+a.usernameIn,
			"node.session.auth.password_in = "+a.passwordIn)
	}
	return out
}

// checkRecordValue refuses a CHAP name or secret the node record file
// cannot hold exactly: open-iscsi's record parser is line based and strips
// blanks around values. field names the value in errors; the value itself
// is never quoted, because it may be a secret.
func checkRecordValue(field, v string) error {
	if v != strings.TrimSpace(v) {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s starts or ends with white space, which open-iscsi's node records cannot hold", field)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s contains a control character", field)
		}
	}
	if len(v) > 255 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s is longer than open-iscsi's 255 bytes", field)
	}
	return nil
}

// checkPathName refuses an IQN or address that cannot be one path element
// of the node database, where open-iscsi files records by target name and
// portal. (os.Root also refuses to leave the database; this gives the
// caller a clear error instead.)
func checkPathName(field, v string) error {
	if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\x00") {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s %q cannot name an open-iscsi node record", field, v)
	}
	return nil
}

// markedRecords returns the record files of iqn at p under nodeDir that
// hold the line iscsiadm wrote for marker (see Host.locateRecords). A
// database that does not exist holds none.
func markedRecords(nodeDir, iqn string, p iscsi.Portal, iface, marker string) ([]string, error) {
	root, err := os.OpenRoot(nodeDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open node database %s: %w", nodeDir, err)
	}
	defer func() { _ = root.Close() }()
	files, err := recordFiles(root, iqn, p, iface)
	if err != nil {
		return nil, fmt.Errorf("node database %s: %w", nodeDir, err)
	}
	var out []string
	for _, f := range files {
		b, err := root.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read node record %s/%s: %w", nodeDir, f, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.TrimSpace(k) == "node.session.auth.username" && strings.TrimSpace(v) == marker {
				out = append(out, f)
				break
			}
		}
	}
	return out, nil
}

// writeRecords writes a into the record files (relative to nodeDir).
func writeRecords(nodeDir string, files []string, a nodeAuth) error {
	root, err := os.OpenRoot(nodeDir)
	if err != nil {
		return fmt.Errorf("open node database %s: %w", nodeDir, err)
	}
	defer func() { _ = root.Close() }()
	for _, f := range files {
		if err := rewriteRecord(root, f, a.lines()); err != nil {
			return fmt.Errorf("update node record %s/%s: %w", nodeDir, f, err)
		}
	}
	return nil
}

// recordFiles returns the record files of iqn at p relative to the node
// database. open-iscsi 2.x files a record either as <iqn>/<addr>,<port>
// (created with -o new, portal group unknown) or as
// <iqn>/<addr>,<port>,<tpgt>/<iface> (created by discovery).
func recordFiles(root *os.Root, iqn string, p iscsi.Portal, iface string) ([]string, error) {
	d, err := root.Open(iqn)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	prefix := strings.ToLower(p.Address) + "," + strconv.Itoa(int(p.Port))
	var out []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		switch {
		case name == prefix && e.Type().IsRegular():
			out = append(out, path.Join(iqn, e.Name()))
		case strings.HasPrefix(name, prefix+",") && e.IsDir():
			f := path.Join(iqn, e.Name(), iface)
			if fi, err := root.Lstat(f); err == nil && fi.Mode().IsRegular() {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// rewriteRecord replaces the auth lines of the record file name with
// lines, keeping everything else. The new lines go where the first auth
// line was (iscsiadm writes them together), else before the
// "# END RECORD" marker.
func rewriteRecord(root *os.Root, name string, lines []string) error {
	old, err := root.ReadFile(name)
	if err != nil {
		return err
	}
	var out []string
	inserted := false
	for _, line := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && authKeys[strings.TrimSpace(k)] {
			if !inserted {
				out = append(out, lines...)
				inserted = true
			}
			continue
		}
		if strings.TrimSpace(line) == "# END RECORD" && !inserted {
			out = append(out, lines...)
			inserted = true
		}
		out = append(out, line)
	}
	if !inserted {
		out = append(out, lines...)
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return err
	}
	tmp := name + ".csi-node-proxy-" + hex.EncodeToString(suffix[:])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(strings.Join(out, "\n") + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}
