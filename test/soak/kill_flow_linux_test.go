//go:build linux

package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// callMethod is the method of the call a step makes and the kill cuts.
func callMethod(s step) string {
	switch s {
	case stepPartition:
		return "PartitionDisk"
	case stepFormat:
		return "FormatVolume"
	case stepMount:
		return "MountVolume"
	case stepUnmount:
		return "UnmountVolume"
	case stepOffline:
		return "SetDiskState"
	}
	panic("no call to kill at step " + s.String())
}

// call makes the one call of step s that the kill cuts.
func (h *killHarness) call(ctx context.Context, kd *kdisk, s step) error {
	var err error
	switch s {
	case stepPartition:
		_, err = h.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: kd.num})
	case stepFormat:
		_, err = h.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: kd.id})
	case stepMount:
		_, err = h.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: kd.id, TargetPath: kd.staging})
	case stepUnmount:
		_, err = h.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: kd.id, TargetPath: kd.staging})
	case stepOffline:
		_, err = h.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: kd.num, IsOnline: false})
	}
	return err
}

// flow runs the steps [from, to) on kd, each retried (for up to 10 s) as a
// kubelet retries a failed NodeStage or NodeUnstage, and tallies the
// failed attempts.
func (h *killHarness) flow(kd *kdisk, from, to step, st *flowStats) {
	t := h.t
	t.Helper()
	if st.retries == nil {
		st.retries, st.messages = map[string]int{}, map[string]string{}
	}
	start := time.Now()
	for s := from; s < to; s++ {
		deadline := time.Now().Add(10 * time.Second)
		for {
			method, err := h.step(kd, s, st)
			if err == nil {
				break
			}
			key := fmt.Sprintf("%s %v", method, status.Code(err))
			if st.retries[key]++; st.retries[key] == 1 {
				st.messages[key] = status.Convert(err).Message()
			}
			if time.Now().After(deadline) {
				t.Fatalf("disk %s, step %v: still failing after 10 s: %s: %v", kd.l.Name, s, method, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	st.took = time.Since(start)
}

// step makes one attempt at step s; it returns the failing method's name
// with the error.
func (h *killHarness) step(kd *kdisk, s step, st *flowStats) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch s {
	case stepOnline:
		_, err := h.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: kd.num, IsOnline: true})
		return "SetDiskState(online)", err
	case stepPartition:
		if _, err := h.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: kd.num}); err != nil {
			return "PartitionDisk", err
		}
		r, err := h.vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: kd.num})
		if err != nil {
			return "ListVolumesOnDisk", err
		}
		if len(r.VolumeIds) != 1 {
			h.t.Fatalf("disk %s has volumes %v after PartitionDisk, want one", kd.l.Name, r.VolumeIds)
		}
		if kd.id != "" && kd.id != r.VolumeIds[0] {
			h.t.Fatalf("disk %s: the volume was %s, now %s (partitioned again)", kd.l.Name, kd.id, r.VolumeIds[0])
		}
		kd.id = r.VolumeIds[0]
		return "", nil
	case stepFormat:
		r, err := h.vol.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: kd.id})
		if err != nil {
			return "IsVolumeFormatted", err
		}
		if r.Formatted {
			return "", nil
		}
		if _, err := h.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: kd.id}); err != nil {
			return "FormatVolume", err
		}
		st.formats++
		return "", nil
	case stepMkdir:
		_, err := h.fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: filepath.Dir(kd.staging)})
		return "Mkdir", err
	case stepMount:
		if _, err := h.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: kd.id, TargetPath: kd.staging}); err != nil {
			return "MountVolume", err
		}
		if m := h.mountsOf(kd); len(m) != 1 || m[0] != kd.staging {
			h.t.Fatalf("disk %s: after MountVolume the volume is mounted at %v, want once at %s", kd.l.Name, m, kd.staging)
		}
		return "", nil
	case stepMarker:
		p := filepath.Join(kd.staging, "marker")
		b, err := os.ReadFile(p)
		switch {
		case err == nil:
			if !bytes.Equal(b, kd.marker) {
				h.t.Fatalf("disk %s: the marker holds %q, want %q", kd.l.Name, b, kd.marker)
			}
			st.markerSeen = true
		case errors.Is(err, fs.ErrNotExist):
			if err := os.WriteFile(p, kd.marker, 0o600); err != nil {
				h.t.Fatal(err)
			}
		default:
			h.t.Fatal(err)
		}
		return "", nil
	case stepUnmount:
		t0 := time.Now()
		if _, err := h.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: kd.id, TargetPath: kd.staging}); err != nil {
			return "UnmountVolume", err
		}
		st.unmount = time.Since(t0)
		h.unmountTook = st.unmount
		if m := h.mountsOf(kd); len(m) != 0 {
			h.t.Fatalf("disk %s: still mounted at %v after UnmountVolume", kd.l.Name, m)
		}
		return "", nil
	case stepOffline:
		_, err := h.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: kd.num, IsOnline: false})
		return "SetDiskState(offline)", err
	}
	panic("unknown step")
}

// dial connects new clients to the daemon's current process; the old
// connections go first (they are bound to a process that is gone).
func (h *killHarness) dial() {
	h.closeConns()
	conn := func(ep string) *grpc.ClientConn {
		c, err := grpc.NewClient("unix://"+h.d.Socket(ep), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			h.t.Fatal(err)
		}
		h.conns = append(h.conns, c)
		return c
	}
	h.disk = diskv1.NewDiskClient(conn("disk-v1"))
	h.vol = volumev1.NewVolumeClient(conn("volume-v1"))
	h.fs = filesystemv1.NewFilesystemClient(conn("filesystem-v1"))
}

func (h *killHarness) closeConns() {
	for _, c := range h.conns {
		_ = c.Close()
	}
	h.conns = nil
}

// mountsOf returns the mount points of kd's partition in the test's mount
// table (the daemon's mounts below the scratch area propagate to it).
func (h *killHarness) mountsOf(kd *kdisk) []string {
	var out []string
	for _, m := range h.s.Mounts() {
		if m.Source == kd.l.Path+"p1" || m.Source == kd.l.Path {
			out = append(out, m.MountPoint)
		}
	}
	return out
}

// describe says what the node holds of kd: partitions (kernel and GPT),
// filesystem, mounts, offline.
func (h *killHarness) describe(kd *kdisk) string {
	parts, _ := filepath.Glob("/sys/block/" + kd.l.Name + "/" + kd.l.Name + "p*")
	gptParts := "no GPT"
	if g, err := linuxnode.ReadGPT(kd.l.Path); err == nil {
		gptParts = fmt.Sprintf("GPT with %d partitions", len(g.Partitions))
	}
	fsys := "no filesystem"
	if len(parts) > 0 {
		if u, ok := readExt4UUID(kd.l.Path + "p1"); ok {
			fsys = "ext4 " + u[:8]
		}
	}
	return fmt.Sprintf("%s, %d kernel partitions, %s, mounted %d×, ro=%s", gptParts, len(parts), fsys, len(h.mountsOf(kd)), kd.l.Attr("ro"))
}

// intentSince returns the intent record of method written at or after
// offset of the audit file, or nil, and whether its outcome record is
// there too.
func (h *killHarness) intentSince(offset int64, method string) (*auditlog.Record, bool) {
	f, err := os.Open(h.audit)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		h.t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var intent *auditlog.Record
	for sc.Scan() {
		var r auditlog.Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		switch {
		case intent == nil && r.Phase == "intent" && r.Method == method:
			intent = &r
		case intent != nil && r.Phase == "done" && r.ID == intent.ID:
			return intent, true
		}
	}
	return intent, false
}
