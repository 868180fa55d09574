package bench

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

const kubelet = `C:\var\lib\kubelet`

// bareFilesystem is the baseline: a grpc-go server whose PathExists does
// nothing but answer.
type bareFilesystem struct {
	filesystemv1.UnimplementedFilesystemServer
}

func (bareFilesystem) PathExists(context.Context, *filesystemv1.PathExistsRequest) (*filesystemv1.PathExistsResponse, error) {
	return &filesystemv1.PathExistsResponse{Exists: true}, nil
}

// shortDir returns a directory short enough for unix socket paths.
func shortDir(tb testing.TB) string {
	tb.Helper()
	return sockdir.New(tb, "bench")
}

func dial(tb testing.TB, sock string) filesystemv1.FilesystemClient {
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return filesystemv1.NewFilesystemClient(conn)
}

// startBare serves the baseline on a unix socket: the same transport the
// daemon uses on Linux.
func startBare(tb testing.TB) filesystemv1.FilesystemClient {
	sock := filepath.Join(shortDir(tb), "bare.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	s := grpc.NewServer()
	filesystemv1.RegisterFilesystemServer(s, bareFilesystem{})
	go func() { _ = s.Serve(lis) }() // returns when Cleanup stops the server
	tb.Cleanup(s.Stop)
	return dial(tb, sock)
}

// startDaemon serves filesystem v1 through the whole daemon stack:
// transport, interceptors, generated adapter, group Service (path
// validation and working-dir policy) and the simulated host, wired by
// hostset as the daemon wires them.
func startDaemon(tb testing.TB) filesystemv1.FilesystemClient {
	n := daemonserver.Start(tb, daemonserver.Options{
		Host: hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}},
		APIs: "filesystem-v1",
	})
	return dial(tb, n.Address(tb, "filesystem", "v1"))
}

var request = &filesystemv1.PathExistsRequest{Path: kubelet + `\plugins\example.csi.io\staging`}

func call(tb testing.TB, c filesystemv1.FilesystemClient) {
	if _, err := c.PathExists(context.Background(), request); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPathExists measures each side on its own.
func BenchmarkPathExists(b *testing.B) {
	for _, side := range []struct {
		name  string
		start func(testing.TB) filesystemv1.FilesystemClient
	}{{"bare-grpc", startBare}, {"daemon", startDaemon}} {
		b.Run(side.name, func(b *testing.B) {
			c := side.start(b)
			call(b, c) // connect before timing
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				call(b, c)
			}
		})
	}
}

// BenchmarkPathExistsRatio alternates calls to the bare server and to the
// daemon so both see the same machine state, and reports the daemon's time
// per call over the bare server's: the overhead of everything the proxy
// adds. Target: at most 1.15.
func BenchmarkPathExistsRatio(b *testing.B) {
	bare, daemon := startBare(b), startDaemon(b)
	call(b, bare)
	call(b, daemon)
	var tBare, tDaemon time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		call(b, bare)
		t1 := time.Now()
		call(b, daemon)
		t2 := time.Now()
		tBare += t1.Sub(t0)
		tDaemon += t2.Sub(t1)
	}
	b.StopTimer()
	b.ReportMetric(float64(tBare.Nanoseconds())/float64(b.N), "bare-ns/call")
	b.ReportMetric(float64(tDaemon.Nanoseconds())/float64(b.N), "daemon-ns/call")
	b.ReportMetric(float64(tDaemon)/float64(tBare), "ratio")
}

// TestDaemonAnswersLikeBaseline keeps the benchmark honest: both sides must
// really answer PathExists, or the ratio compares nothing.
func TestDaemonAnswersLikeBaseline(t *testing.T) {
	for name, c := range map[string]filesystemv1.FilesystemClient{"bare": startBare(t), "daemon": startDaemon(t)} {
		r, err := c.PathExists(context.Background(), &filesystemv1.PathExistsRequest{Path: kubelet})
		if err != nil || !r.Exists {
			t.Errorf("%s: PathExists(%s) = %v, %v", name, kubelet, r, err)
		}
	}
}
