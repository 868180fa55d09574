//go:build linux

package hostileload

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
)

// The flooder's environment: set, the test binary runs flood instead of
// the tests (TestMain), as the user floodUID.
const (
	floodEnv         = "HOSTILELOAD_FLOOD_SOCKETS"
	floodDurationEnv = "HOSTILELOAD_FLOOD_DURATION"
)

// The flood's shape. Together they use the flooding user's 64
// connections: partial streams first, then the denied calls' clients,
// and the connection storm takes what is left (most of it refused).
const (
	partialConns     = 40          // connections holding partial requests
	partialStreams   = 16          // streams on each (the per-connection bound)
	partialDeclared  = 127 << 10   // declared request size: just under the 128 KiB bound
	stormDialers     = 2           // goroutines opening connections
	stormHold        = 400         // connections each holds open at most
	hugeDeniedSize   = 32000       // a path this long is valid, and outside every root
	oversizedRequest = 4 << 20     // a request over the bound (ResourceExhausted)
	deniedWorkers    = 8           // goroutines of small denied calls
	hugeWorkers      = 2           // goroutines of huge denied calls
	floodUID         = 65534       // nobody
	floodSetup       = time.Second // the flood's set-up before the driver's loaded run
)

// floodReport is what the flooder prints at the end, as JSON.
type floodReport struct {
	// Codes counts the answers of the flooder's unary calls by gRPC code.
	Codes map[string]int64 `json:"codes"`
	// Denied counts PermissionDenied answers (small and huge).
	Denied int64 `json:"denied"`
	// HugeDenied counts PermissionDenied answers to the 32,000-byte paths.
	HugeDenied int64 `json:"huge_denied"`
	// Dials and DialsRefused count the storm's connections: opened, and
	// closed by the daemon before the flooder closed them.
	Dials        int64 `json:"dials"`
	DialsRefused int64 `json:"dials_refused"`
	// PartialStreams counts streams left holding part of a request.
	PartialStreams int64 `json:"partial_streams"`
}

// flood runs the flood against the sockets in dir for d and prints a
// floodReport on stdout.
func flood(dir string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	rep := floodReport{Codes: map[string]int64{}}
	var mu sync.Mutex
	count := func(err error, huge bool) {
		code := status.Code(err).String()
		mu.Lock()
		defer mu.Unlock()
		rep.Codes[code]++
		if code == "PermissionDenied" {
			rep.Denied++
			if huge {
				rep.HugeDenied++
			}
		}
	}
	fsSock := filepath.Join(dir, "csi-proxy-filesystem-v1.sock")
	diskSock := filepath.Join(dir, "csi-proxy-disk-v1.sock")
	// The clients of the denied calls connect first: once the partial
	// streams and the storm fill the user's connections, a new one is
	// refused at accept, which is the bound working, not a flood.
	fsConn, err := grpc.NewClient("unix://"+fsSock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8<<20)))
	if err != nil {
		return err
	}
	defer fsConn.Close()
	diskConn, err := grpc.NewClient("unix://"+diskSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer diskConn.Close()
	fs, dk := filesystemv1.NewFilesystemClient(fsConn), diskv1.NewDiskClient(diskConn)
	call := func(f func(context.Context) error, huge bool) {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		err := f(cctx)
		// Answers after the flood's end are not counted. The clock,
		// not ctx.Err(), says when that is: a flooder stopped (SIGSTOP)
		// across its deadline runs on before the deadline's timer has
		// fired, and gRPC fails its calls at once with DeadlineExceeded
		// (their deadline has passed) while ctx.Err() is still nil: one
		// run counted 941 of them.
		if deadline, _ := ctx.Deadline(); time.Now().Before(deadline) {
			count(err, huge)
		}
	}
	// One call on each client, so both are connected.
	call(func(c context.Context) error {
		_, err := fs.PathExists(c, &filesystemv1.PathExistsRequest{Path: `C:\evil`})
		return err
	}, false)
	call(func(c context.Context) error { _, err := dk.ListDiskIDs(c, &diskv1.ListDiskIDsRequest{}); return err }, false)
	var partial atomic.Int64
	var wg sync.WaitGroup
	for i := range partialConns * part("partial") {
		wg.Go(func() { holdPartial(ctx, fsSock, &partial) })
		if i%8 == 7 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(300 * time.Millisecond)
	for w := range deniedWorkers * part("denied") {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if i%2 == 0 {
					call(func(c context.Context) error {
						_, err := fs.Mkdir(c, &filesystemv1.MkdirRequest{Path: fmt.Sprintf(`C:\var\lib\kubelet\evil-%d-%d`, w, i)})
						return err
					}, false)
				} else {
					call(func(c context.Context) error {
						_, err := dk.SetDiskState(c, &diskv1.SetDiskStateRequest{DiskNumber: 1, IsOnline: false})
						return err
					}, false)
				}
			}
		})
	}
	huge := hugePath()
	over := strings.Repeat("x", oversizedRequest)
	for range hugeWorkers * part("huge") {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				p := huge
				if i%10 == 9 {
					p = over
				}
				call(func(c context.Context) error {
					_, err := fs.Mkdir(c, &filesystemv1.MkdirRequest{Path: p})
					return err
				}, p == huge)
			}
		})
	}
	var dials, refused atomic.Int64
	for range stormDialers * part("storm") {
		wg.Go(func() { storm(ctx, fsSock, &dials, &refused) })
	}
	// The control, only when named: the flooder's CPU burnt without a
	// single call, which tells how much of the driver's slower calls is
	// the machine's CPU taken rather than anything the daemon does.
	if os.Getenv("HOSTILELOAD_FLOOD_PARTS") != "" && part("spin") == 1 {
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() { spin(ctx) })
		}
	}
	wg.Wait()
	rep.Dials, rep.DialsRefused, rep.PartialStreams = dials.Load(), refused.Load(), partial.Load()
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// spin keeps a CPU busy until ctx ends, touching nothing but its own
// registers and a word of memory.
func spin(ctx context.Context) {
	var x uint64 = 1
	for ctx.Err() == nil {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	spinSink.Add(x)
}

// spinSink keeps the compiler from dropping spin's loop.
var spinSink atomic.Uint64

// hugePath is a Windows path of about hugeDeniedSize bytes that every
// validator accepts (elements of 200 characters, under the 32,767 limit)
// and that lies outside the kubelet directory, so the policy denies it.
func hugePath() string {
	var b strings.Builder
	b.WriteString(`C:\evil`)
	for b.Len() < hugeDeniedSize-201 {
		b.WriteString(`\` + strings.Repeat("a", 200))
	}
	return b.String()
}

// storm opens connections to sock as fast as it can, holding up to
// stormHold of them, closing the oldest past that; a connection the
// daemon closed (refused at accept, or its handshake timed out) counts
// as refused.
func storm(ctx context.Context, sock string, dials, refused *atomic.Int64) {
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for ctx.Err() == nil {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "unix", sock)
		if err != nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		dials.Add(1)
		held = append(held, c)
		if len(held) >= stormHold {
			for _, h := range held[:stormHold/2] {
				if closedByPeer(h) {
					refused.Add(1)
				}
				_ = h.Close()
			}
			held = append(held[:0], held[stormHold/2:]...)
		}
	}
}

// closedByPeer tells whether the daemon closed c (a read sees EOF at once).
func closedByPeer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// holdPartial opens one HTTP/2 connection to sock, starts partialStreams
// Mkdir calls each declaring a partialDeclared-byte request and sending
// only what the flow-control window lets through, and holds them until
// ctx ends, answering the daemon's SETTINGS and PINGs so the connection
// stays up. A connection the daemon closes is opened again.
func holdPartial(ctx context.Context, sock string, partial *atomic.Int64) {
	for ctx.Err() == nil {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "unix", sock)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		n := partialOn(c)
		partial.Add(int64(n))
		stop()
		_ = c.Close()
		time.Sleep(50 * time.Millisecond)
	}
}

// partialOn does holdPartial's work on one connection until it closes
// and returns how many streams it started.
func partialOn(c net.Conn) int {
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		return 0
	}
	fr := http2.NewFramer(c, c)
	var wmu sync.Mutex
	write := func(f func() error) error {
		wmu.Lock()
		defer wmu.Unlock()
		return f()
	}
	if err := write(func() error { return fr.WriteSettings() }); err != nil {
		return 0
	}
	var hdr bytes.Buffer
	enc := hpack.NewEncoder(&hdr)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/v1.Filesystem/Mkdir"},
		{":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	block := hdr.Bytes()
	// Each stream: the 5-byte gRPC prefix declaring partialDeclared
	// bytes, then 16 KiB of them (one frame; the stream's window is 64
	// KiB, the connection's 256 KiB), never the rest.
	first := make([]byte, 5+16<<10)
	binary.BigEndian.PutUint32(first[1:5], partialDeclared)
	started := 0
	for s := range partialStreams {
		id := uint32(2*s + 1)
		err := write(func() error {
			if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true}); err != nil {
				return err
			}
			return fr.WriteData(id, false, first)
		})
		if err != nil {
			return started
		}
		started++
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return started
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = write(func() error { return fr.WriteSettingsAck() })
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = write(func() error { return fr.WritePing(true, f.Data) })
			}
		case *http2.GoAwayFrame:
			return started
		}
	}
}

// part is 1 when the flood has the named part (all unless
// HOSTILELOAD_FLOOD_PARTS lists some: partial, denied, huge, storm; and
// spin, the control, which runs only when listed), else 0.
func part(name string) int {
	v := os.Getenv("HOSTILELOAD_FLOOD_PARTS")
	if v == "" || strings.Contains(","+v+",", ","+name+",") {
		return 1
	}
	return 0
}
