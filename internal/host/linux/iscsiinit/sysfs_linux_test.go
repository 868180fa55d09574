//go:build linux

package iscsiinit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// buildSysfs lays out the sysfs of two sessions to recIQN (one through
// the recorded portal, one through another) and one to another target.
func buildSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir := func(rel string) {
		if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	session := func(sid, iqn, addr, port string, host string, luns map[string]string) {
		write("class/iscsi_session/session"+sid+"/targetname", iqn)
		write("class/iscsi_connection/connection"+sid+":0/persistent_address", addr)
		write("class/iscsi_connection/connection"+sid+":0/persistent_port", port)
		for lun, dev := range luns {
			d := "class/iscsi_session/session" + sid + "/device/target" + host + ":0:0/" + host + ":0:0:" + lun
			if dev == "" {
				mkdir(d) // a LUN without a block device (the controller)
				continue
			}
			mkdir(d + "/block/" + dev)
		}
	}
	session("1", recIQN, "127.0.0.1", "3260", "2", map[string]string{"0": "", "1": "sdb", "2": "sdc"})
	session("2", recIQN, "10.0.0.2", "3260", "3", map[string]string{"1": "sdd"})
	session("3", "iqn.2026-11.io.example:other", "127.0.0.1", "3260", "4", map[string]string{"1": "sde"})
	write("block/sdb/diskseq", "17")
	write("block/sdc/diskseq", "18")
	write("block/sdd/diskseq", "19")
	write("block/sdx/diskseq", "2147483648")
	return root
}

func TestTargetDisks_FakeSysfs(t *testing.T) {
	ctx := context.Background()
	root := buildSysfs(t)
	r := newReplay(t)
	h := newTestHost(t, r, Config{SysfsRoot: root})
	got, err := h.TargetDisks(ctx, recPortal, recIQN)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{17, 18}; !reflect.DeepEqual(got, want) {
		t.Errorf("disks = %v, want %v (diskseq of sdb and sdc only)", got, want)
	}
	if got, err := h.TargetDisks(ctx, iscsi.Portal{Address: "10.0.0.2", Port: 3260}, recIQN); err != nil || !reflect.DeepEqual(got, []uint32{19}) {
		t.Errorf("second portal: %v, %v", got, err)
	}
	// No session: an empty list, as upstream answers for a target that is
	// not connected (csi-proxy pkg/os/iscsi/api.go GetTargetDisks, commit
	// eeba4706).
	if got, err := h.TargetDisks(ctx, recPortal, "iqn.2026-11.io.example:nosession"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no session: %#v, %v; want an empty list", got, err)
	}
	if got, err := h.TargetDisks(ctx, iscsi.Portal{Address: "127.0.0.1", Port: 3261}, recIQN); err != nil || got == nil || len(got) != 0 {
		t.Errorf("no session through another port: %#v, %v; want an empty list", got, err)
	}

	// The daemon's numbering, not diskseq, when given.
	h2, err := newHost(Config{SysfsRoot: root, NodeDir: t.TempDir()}, r, func(name string) (uint32, error) {
		return uint32(name[2]-'a') + 100, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h2.TargetDisks(ctx, recPortal, recIQN); err != nil || !reflect.DeepEqual(got, []uint32{101, 102}) {
		t.Errorf("custom numbering: %v, %v", got, err)
	}
	if _, err := DiskSeqNumber(root)("sdx"); !errors.Is(err, errdefs.ErrOutOfRange) {
		t.Errorf("diskseq of 2^31: %v, want ErrOutOfRange", err)
	}
	if _, err := DiskSeqNumber(root)("../etc"); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("device name with a slash: %v", err)
	}
}

// buildSysfsWithoutDiskseq is buildSysfs as a kernel before 5.15 lays it
// out: the same sessions and disks, each disk with its dev file, none
// with a diskseq file.
func buildSysfsWithoutDiskseq(t *testing.T) string {
	t.Helper()
	root := buildSysfs(t)
	for dev, majMin := range map[string]string{"sdb": "8:16", "sdc": "8:32", "sdd": "8:48", "sdx": "65:0"} {
		if err := os.Remove(filepath.Join(root, "block", dev, "diskseq")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "block", dev, "dev"), []byte(majMin+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestTargetDisks_FakeSysfsWithoutDiskseq: on kernels before 5.15 the
// disks of a session are numbered by the disk group's numbering the
// daemon passes (here a stand-in that, like blockdev's, numbers disks from
// 2^31 per device and gives a re-plugged disk a new number); without it
// they are refused as FailedPrecondition naming the cause, not as a file
// error.
func TestTargetDisks_FakeSysfsWithoutDiskseq(t *testing.T) {
	ctx := context.Background()
	root := buildSysfsWithoutDiskseq(t)
	numbers := map[string]uint32{}
	generation := 0 // bumped when a disk is re-plugged
	blockdevLike := func(name string) (uint32, error) {
		dev, err := os.ReadFile(filepath.Join(root, "block", name, "dev"))
		if err != nil {
			return 0, err
		}
		key := fmt.Sprintf("%s %s %d", name, strings.TrimSpace(string(dev)), generation)
		if n, ok := numbers[key]; ok {
			return n, nil
		}
		numbers[key] = 1<<31 + uint32(len(numbers))
		return numbers[key], nil
	}
	r := newReplay(t)
	h, err := newHost(Config{SysfsRoot: root, NodeDir: t.TempDir()}, r, blockdevLike)
	if err != nil {
		t.Fatal(err)
	}
	first, err := h.TargetDisks(ctx, recPortal, recIQN)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{1 << 31, 1<<31 + 1}; !reflect.DeepEqual(first, want) {
		t.Errorf("disks = %v, want %v", first, want)
	}
	if again, err := h.TargetDisks(ctx, recPortal, recIQN); err != nil || !reflect.DeepEqual(again, first) {
		t.Errorf("asked again: %v, %v; want the same %v", again, err, first)
	}
	// The LUNs come back under the same sdb and sdc after a reconnect: new
	// disks, new numbers, never the old ones.
	generation++
	if replugged, err := h.TargetDisks(ctx, recPortal, recIQN); err != nil || reflect.DeepEqual(replugged, first) || len(replugged) != 2 {
		t.Errorf("after re-plug: %v, %v; want two new numbers (not %v)", replugged, err, first)
	}

	plain, err := newHost(Config{SysfsRoot: root, NodeDir: t.TempDir()}, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.TargetDisks(ctx, recPortal, recIQN)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "no diskseq (a kernel before 5.15)") {
		t.Errorf("default numbering without diskseq: %v, want ErrFailedPrecondition naming the kernel", err)
	}
	if _, err := DiskSeqNumber(root)("sdq"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("a disk that is gone: %v, want ErrNotFound", err)
	}
}
