//go:build linux

package iscsiinit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// writeNodeAuth writes a into every record of iqn at p under nodeDir, as
// ConnectTarget does once it has located them.
func writeNodeAuth(nodeDir, iqn string, p iscsi.Portal, iface string, a nodeAuth) error {
	root, err := os.OpenRoot(nodeDir)
	if err != nil {
		return err
	}
	files, err := recordFiles(root, iqn, p, iface)
	_ = root.Close()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("no record")
	}
	return writeRecords(nodeDir, files, a)
}

func TestWriteNodeAuth(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "iscsiadm", "recorded", "node_record_file"))
	if err != nil {
		t.Fatal(err)
	}
	setup := func(t *testing.T, rel string) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), orig, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	chap := nodeAuth{method: "CHAP", username: "u", password: "p4ssw0rdp4ss"}
	t.Run("CHAP then None", func(t *testing.T) {
		dir := setup(t, recRecord)
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", chap); err != nil {
			t.Fatal(err)
		}
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", nodeAuth{method: "None"}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, recRecord))
		if string(got) != string(orig) {
			t.Errorf("after None the record differs from iscsiadm's:\n%s", got)
		}
	})
	t.Run("discovery-style record directory", func(t *testing.T) {
		rel := recIQN + "/127.0.0.1,3260,1/default"
		dir := setup(t, rel)
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", chap); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, rel))
		if !strings.Contains(string(got), "node.session.auth.authmethod = CHAP\nnode.session.auth.username = u\nnode.session.auth.password = p4ssw0rdp4ss\nnode.session.auth.chap_algs = MD5\n") {
			t.Errorf("record:\n%s", got)
		}
	})
	t.Run("no record", func(t *testing.T) {
		if err := writeNodeAuth(t.TempDir(), recIQN, recPortal, "default", chap); err == nil {
			t.Error("writing into a missing record succeeded")
		}
	})
	t.Run("a symlink out of the database is not followed", func(t *testing.T) {
		outside := setup(t, "victim/127.0.0.1,3260")
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, recIQN)); err != nil {
			t.Fatal(err)
		}
		if err := writeNodeAuth(dir, recIQN, recPortal, "default", chap); err == nil {
			t.Error("followed a symlink out of the node database")
		}
		got, _ := os.ReadFile(filepath.Join(outside, "victim", "127.0.0.1,3260"))
		if string(got) != string(orig) {
			t.Error("the file outside the database changed")
		}
	})
}
