package client_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

// kindOf names the sentinel (or context error) err wraps, for comparing
// the two modes: their messages may differ, their kinds must not.
func kindOf(err error) string {
	if err == nil {
		return "nil"
	}
	for _, k := range []error{errdefs.ErrInvalidArgument, errdefs.ErrNotFound, errdefs.ErrAlreadyExists, errdefs.ErrFailedPrecondition,
		errdefs.ErrPermissionDenied, errdefs.ErrUnimplemented, errdefs.ErrOutOfRange, errdefs.ErrUnavailable, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "no sentinel"
}

// parityStep is one call, made the same way in both modes.
type parityStep struct {
	name string
	call func(ctx context.Context, n groups.Node) (any, error)
	// secret must appear in neither mode's error.
	secret string
	// field must be named by both modes' errors.
	field string
}

// paritySteps are calls on a fresh host from testdata/sim.json, in order
// (later ones see what earlier ones did): empty and filled lists and maps,
// exact numbers, refusals, missing objects, requests that are not valid
// UTF-8, and calls whose context ended.
func paritySteps() []parityStep {
	portal := &iscsi.TargetPortal{TargetAddress: portal, TargetPort: 3260}
	var volumeID string
	return []parityStep{
		{name: "ListDiskLocations", call: func(ctx context.Context, n groups.Node) (any, error) { return n.Disk().ListDiskLocations(ctx, nil) }},
		{name: "ListDiskIDs", call: func(ctx context.Context, n groups.Node) (any, error) { return n.Disk().ListDiskIDs(ctx, nil) }},
		{name: "GetDiskStats", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Disk().GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: dataDisk})
		}},
		{name: "GetDiskStats(missing)", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Disk().GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: missingDisk})
		}},
		{name: "ListVolumesOnDisk(raw disk: none)", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Volume().ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: dataDisk})
		}},
		{name: "PartitionDisk", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Disk().PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: dataDisk})
		}},
		{name: "ListVolumesOnDisk", call: func(ctx context.Context, n groups.Node) (any, error) {
			r, err := n.Volume().ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: dataDisk})
			if err == nil && len(r.VolumeIDs) == 1 {
				volumeID = r.VolumeIDs[0]
			}
			return r, err
		}},
		{name: "FormatVolume", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Volume().FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: volumeID})
		}},
		{name: "GetVolumeStats", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Volume().GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: volumeID})
		}},
		{name: "GetDiskNumberFromVolumeID", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Volume().GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: volumeID})
		}},
		{name: "ListTargetPortals(none)", call: func(ctx context.Context, n groups.Node) (any, error) { return n.ISCSI().ListTargetPortals(ctx, nil) }},
		{name: "GetTargetDisks(not connected)", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.ISCSI().GetTargetDisks(ctx, &iscsi.GetTargetDisksRequest{TargetPortal: portal, IQN: iqnOpen})
		}},
		{name: "AddTargetPortal", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.ISCSI().AddTargetPortal(ctx, &iscsi.AddTargetPortalRequest{TargetPortal: portal})
		}},
		{name: "ListTargetPortals", call: func(ctx context.Context, n groups.Node) (any, error) { return n.ISCSI().ListTargetPortals(ctx, nil) }},
		{name: "DiscoverTargetPortal", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.ISCSI().DiscoverTargetPortal(ctx, &iscsi.DiscoverTargetPortalRequest{TargetPortal: portal})
		}},
		{name: "ConnectTarget", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.ISCSI().ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: portal, IQN: iqnOpen})
		}},
		{name: "GetTargetDisks", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.ISCSI().GetTargetDisks(ctx, &iscsi.GetTargetDisksRequest{TargetPortal: portal, IQN: iqnOpen})
		}},
		{name: "GetBIOSSerialNumber", call: func(ctx context.Context, n groups.Node) (any, error) { return n.System().GetBIOSSerialNumber(ctx, nil) }},
		{name: "GetService", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.System().GetService(ctx, &system.GetServiceRequest{Name: "W32Time"})
		}},
		{name: "PathExists", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet})
		}},
		{name: "Mkdir(invalid UTF-8)", field: "path", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\a` + "\xff"})
		}},
		{name: "ConnectTarget(invalid UTF-8 secret)", field: "chap_secret", secret: "s\xff123456789012", call: func(ctx context.Context, n groups.Node) (any, error) {
			return n.ISCSI().ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: portal, IQN: iqnOpen, AuthType: iscsi.AuthOneWayCHAP, ChapUsername: "u", ChapSecret: "s\xff123456789012"})
		}},
		{name: "ListDiskIDs(deadline passed)", call: func(ctx context.Context, n groups.Node) (any, error) {
			ctx, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
			defer cancel()
			return n.Disk().ListDiskIDs(ctx, nil)
		}},
		{name: "ListDiskIDs(canceled)", call: func(ctx context.Context, n groups.Node) (any, error) {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return n.Disk().ListDiskIDs(ctx, nil)
		}},
	}
}

// TestParityWithLibraryMode: the same calls on the same simulated host in
// library mode (inprocess, Host "simulated") and through the client, at the
// newest versions and at the old ones, give reflect.DeepEqual responses
// (empty lists and maps included: never nil in one mode and empty in the
// other) and errors wrapping the same sentinel or context error.
func TestParityWithLibraryMode(t *testing.T) {
	for _, spec := range []string{"all", oldAPIs} {
		t.Run(spec, func(t *testing.T) {
			ctx := context.Background()
			d := startDaemon(t, socketDir(t), spec)
			c, err := client.Dial(ctx, client.Options{SocketDir: d.dir})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			lib, err := inprocess.New(ctx, inprocess.Options{Host: inprocess.HostSimulated, SimConfigFile: filepath.Join("testdata", "sim.json"), AllowedServices: allowedServices})
			if err != nil {
				t.Fatal(err)
			}
			defer lib.Close()
			// Each mode runs the steps in order on its own host.
			libSteps, cliSteps := paritySteps(), paritySteps()
			for i := range libSteps {
				name := libSteps[i].name
				want, wantErr := libSteps[i].call(ctx, lib)
				got, gotErr := cliSteps[i].call(ctx, c)
				if errors.Is(gotErr, errdefs.ErrUnimplemented) && wantErr == nil {
					continue // an old version lacks the method: the round trip tests check that
				}
				if kindOf(gotErr) != kindOf(wantErr) {
					t.Errorf("%s: client %v [%s]; library %v [%s]", name, gotErr, kindOf(gotErr), wantErr, kindOf(wantErr))
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\n client:  %#v\n library: %#v", name, deref(got), deref(want))
				}
				if f := libSteps[i].field; f != "" && !strings.Contains(fmt.Sprint(gotErr), f) {
					t.Errorf("%s: the client's error does not name %s: %v", name, f, gotErr)
				}
				if s := libSteps[i].secret; s != "" && (strings.Contains(fmt.Sprint(gotErr), s) || strings.Contains(fmt.Sprint(wantErr), s)) {
					t.Errorf("%s: an error shows the secret: client %v; library %v", name, gotErr, wantErr)
				}
			}
		})
	}
}

// deref shows what a response pointer points at.
func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return v
}
