//go:build linux

package soak

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// countSockets counts the sockets left in dir.
func countSockets(t *testing.T, dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Type()&fs.ModeSocket != 0 {
			n++
		}
	}
	return n
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// checkOnePartition fails the test unless the disk has exactly one
// partition, number 1, both in its GPT and in the kernel.
func checkOnePartition(t *testing.T, what string, l *linuxnode.Loop) {
	t.Helper()
	g, err := linuxnode.ReadGPT(l.Path)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if len(g.Partitions) != 1 || g.Partitions[0].Index != 1 {
		t.Errorf("%s: GPT partitions %+v, want one, number 1", what, g.Partitions)
	}
	parts, _ := filepath.Glob("/sys/block/" + l.Name + "/" + l.Name + "p*")
	if len(parts) != 1 || filepath.Base(parts[0]) != l.Name+"p1" {
		t.Errorf("%s: kernel partitions %v, want only %sp1", what, parts, l.Name)
	}
}

// ext4UUID returns the UUID of the ext4 filesystem on the disk's first
// partition, failing the test if there is none.
func ext4UUID(t *testing.T, l *linuxnode.Loop) string {
	t.Helper()
	u, ok := readExt4UUID(l.Path + "p1")
	if !ok {
		t.Fatalf("%sp1 holds no ext4 filesystem", l.Path)
	}
	return u
}

// readExt4UUID reads an ext4 superblock's UUID: the magic 0xEF53 at byte
// 0x38 and the UUID at 0x68 of the superblock, 1024 bytes into the device.
func readExt4UUID(dev string) (string, bool) {
	f, err := os.Open(dev)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, 1024); err != nil {
		return "", false
	}
	if binary.LittleEndian.Uint16(sb[0x38:]) != 0xEF53 {
		return "", false
	}
	return hex.EncodeToString(sb[0x68:0x78]), true
}

// fsckReadOnly checks the volume's filesystem without changing it.
func fsckReadOnly(l *linuxnode.Loop) (string, error) {
	out, err := exec.Command("e2fsck", "-f", "-n", l.Path+"p1").CombinedOutput()
	return string(out), err
}
