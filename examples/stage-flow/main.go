// Command stage-flow plays the part of a CSI node plugin: it stages a disk
// (online, partition, format, mount), publishes it to a pod by symlink,
// reads its stats, then unpublishes, unstages and takes the disk offline,
// all through csi-node-proxy's sockets. Every step is printed.
//
// It uses only the generated gRPC stubs under api/, exactly as a driver
// that talks to upstream csi-proxy does, so it doubles as an example of the
// wire API. Paths follow the style of --kubelet-path: POSIX paths for the
// Linux backend (make demo, hack/demo-linux.sh), Windows paths for the
// simulated Windows host (make demo-simulated, hack/demo.sh).
//
//	stage-flow --socket-dir=/tmp/csi-node-proxy --kubelet-path=/var/lib/kubelet --disk=42
//	stage-flow --socket-dir=/tmp/csi-node-proxy --kubelet-path='C:\var\lib\kubelet' --disk=1
//
// On Linux a disk's number is the kernel's diskseq
// (/sys/block/<name>/diskseq); on Windows, the disk number Windows shows.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
)

func main() {
	socketDir := flag.String("socket-dir", "/tmp/csi-node-proxy", "directory holding the proxy's sockets")
	diskNumber := flag.Uint("disk", 1, "number of the disk to stage (on Linux the kernel's diskseq, /sys/block/<name>/diskseq)")
	kubelet := flag.String("kubelet-path", `C:\var\lib\kubelet`, "the proxy's -kubelet-path; a path starting with / selects POSIX paths")
	flag.Parse()
	if err := run(*socketDir, uint32(*diskNumber), *kubelet); err != nil {
		fmt.Fprintln(os.Stderr, "stage-flow:", err)
		os.Exit(1)
	}
}

func dial(dir, group, version string) (*grpc.ClientConn, error) {
	sock := filepath.Join(dir, "csi-proxy-"+group+"-"+version+".sock")
	return grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

func run(dir string, n uint32, kubelet string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var conns []*grpc.ClientConn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	open := func(group string) (*grpc.ClientConn, error) {
		c, err := dial(dir, group, "v1")
		if err == nil {
			conns = append(conns, c)
		}
		return c, err
	}
	dc, err := open("disk")
	if err != nil {
		return err
	}
	vc, err := open("volume")
	if err != nil {
		return err
	}
	fc, err := open("filesystem")
	if err != nil {
		return err
	}
	disk, volume, fs := diskv1.NewDiskClient(dc), volumev1.NewVolumeClient(vc), filesystemv1.NewFilesystemClient(fc)

	join := pathJoiner(kubelet)
	staging := join(kubelet, "plugins", "kubernetes.io", "csi", "example.csi.io", "pv-demo", "globalmount")
	podVolume := join(kubelet, "pods", "0f1e2d3c", "volumes", "kubernetes.io~csi", "pv-demo")
	publish := join(podVolume, "mount")
	step := func(name string, f func() (string, error)) error {
		out, err := f()
		if err != nil {
			fmt.Printf("  %-28s FAILED: %v\n", name, err)
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("  %-28s %s\n", name, out)
		return nil
	}
	var volumeID string
	steps := []struct {
		name string
		f    func() (string, error)
	}{
		{"ListDiskIDs", func() (string, error) {
			r, err := disk.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
			if err != nil {
				return "", err
			}
			ids, ok := r.DiskIDs[n]
			if !ok {
				return "", fmt.Errorf("%d disks, but no disk %d", len(r.DiskIDs), n)
			}
			return fmt.Sprintf("%d disks; disk %d: page83 %q, serial %q", len(r.DiskIDs), n, ids.GetPage83(), ids.GetSerialNumber()), nil
		}},
		{"GetDiskStats", func() (string, error) {
			r, err := disk.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: n})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%d bytes", r.TotalBytes), nil
		}},
		{"SetDiskState(online)", func() (string, error) {
			_, err := disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: true})
			return "ok", err
		}},
		{"PartitionDisk", func() (string, error) {
			_, err := disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
			return "ok", err
		}},
		{"ListVolumesOnDisk", func() (string, error) {
			r, err := volume.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n})
			if err != nil {
				return "", err
			}
			if len(r.VolumeIds) == 0 {
				return "", fmt.Errorf("disk %d has no volume", n)
			}
			volumeID = r.VolumeIds[0]
			return volumeID, nil
		}},
		{"IsVolumeFormatted", func() (string, error) {
			r, err := volume.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: volumeID})
			if err != nil {
				return "", err
			}
			if !r.Formatted {
				if _, err := volume.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: volumeID}); err != nil {
					return "", err
				}
				return "false -> FormatVolume ok", nil
			}
			return "true", nil
		}},
		{"Mkdir(staging)", func() (string, error) {
			_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: staging})
			return staging, err
		}},
		{"MountVolume(staging)", func() (string, error) {
			_, err := volume.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: volumeID, TargetPath: staging})
			return "ok", err
		}},
		{"GetVolumeStats", func() (string, error) {
			r, err := volume.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: volumeID})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("total %d bytes, used %d bytes", r.TotalBytes, r.UsedBytes), nil
		}},
		{"Mkdir(pod volumes dir)", func() (string, error) {
			_, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: podVolume})
			return podVolume, err
		}},
		{"CreateSymlink(publish)", func() (string, error) {
			_, err := fs.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
			return publish + " -> staging", err
		}},
		{"IsSymlink(publish)", func() (string, error) {
			r, err := fs.IsSymlink(ctx, &filesystemv1.IsSymlinkRequest{Path: publish})
			return fmt.Sprint(r.GetIsSymlink()), err
		}},
		{"Rmdir(publish, force)", func() (string, error) {
			_, err := fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: publish, Force: true})
			return "ok", err
		}},
		{"GetVolumeIDFromTargetPath", func() (string, error) {
			r, err := volume.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
			return r.GetVolumeId(), err
		}},
		{"UnmountVolume(staging)", func() (string, error) {
			_, err := volume.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: volumeID, TargetPath: staging})
			return "ok", err
		}},
		{"Rmdir(staging)", func() (string, error) {
			_, err := fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: staging})
			return "ok", err
		}},
		{"SetDiskState(offline)", func() (string, error) {
			_, err := disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: false})
			return "ok", err
		}},
	}
	fmt.Printf("stage, publish and unstage disk %d through %s:\n", n, dir)
	for _, s := range steps {
		if err := step(s.name, s.f); err != nil {
			return err
		}
	}
	fmt.Println("done: every call answered over a real gRPC connection")
	return nil
}

// pathJoiner returns a function joining path elements in the style of the
// host the proxy serves: POSIX when kubelet is an absolute POSIX path,
// Windows otherwise. The proxy's paths are the host's, not this program's,
// so path/filepath (this machine's style) would be wrong for one of them.
func pathJoiner(kubelet string) func(elems ...string) string {
	sep := `\`
	if strings.HasPrefix(kubelet, "/") {
		sep = "/"
	}
	return func(elems ...string) string {
		out := strings.TrimRight(elems[0], sep)
		for _, e := range elems[1:] {
			out += sep + e
		}
		return out
	}
}
