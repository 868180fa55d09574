//go:build linux

package hostset

import (
	"io"
	"testing"
)

// TestLinuxSystemCloses: the Linux system backend (systemd over D-Bus,
// whose connection outlives a call) is one Set.Close closes.
func TestLinuxSystemCloses(t *testing.T) {
	s, err := New(Config{Host: Linux, WorkingDirs: []string{t.TempDir()}, LinuxFilesystem: "ext4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.System.(io.Closer); !ok {
		t.Errorf("the Linux system backend %T has no Close, so Set.Close leaves its D-Bus connection open", s.System)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close before any call: %v", err)
	}
}
