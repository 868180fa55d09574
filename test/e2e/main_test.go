package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	volumev2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v2alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/klogcapture"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

var showLog = flag.Bool("e2e.klog", false, "also print the daemon's klog output (payloads at -v=5, secrets redacted)")

// served are the service descriptors of the eight current group-versions the daemon
// serves: the source of the method list the suite must cover.
var served = []*grpc.ServiceDesc{
	&diskv1.Disk_ServiceDesc,
	&volumev1.Volume_ServiceDesc,
	&volumev2alpha1.Volume_ServiceDesc,
	&filesystemv1.Filesystem_ServiceDesc,
	&filesystemv2alpha1.Filesystem_ServiceDesc,
	&smbv1.Smb_ServiceDesc,
	&iscsiv1alpha2.Iscsi_ServiceDesc,
	&systemv1alpha1.System_ServiceDesc,
}

// servedMethods are the full names (/package.Service/Method) of every
// served method.
func servedMethods() []string {
	var out []string
	for _, sd := range served {
		for _, m := range sd.Methods {
			out = append(out, "/"+sd.ServiceName+"/"+m.MethodName)
		}
		if len(sd.Streams) != 0 {
			panic(sd.ServiceName + " has streaming methods, which the recorder does not see")
		}
	}
	return out
}

// noFailurePath lists the methods no request can make fail on the simulated
// host, and why. Every other served method must fail at least once in the
// suite. (A cancelled or expired context fails any call, but on the
// client's side: that is not a failure path of the method.)
var noFailurePath = map[string]string{
	diskv1.Disk_ListDiskLocations_FullMethodName:             "empty request; lists the disks that have a location, possibly none",
	diskv1.Disk_ListDiskIDs_FullMethodName:                   "empty request; lists every disk's IDs, possibly empty strings",
	diskv1.Disk_Rescan_FullMethodName:                        "empty request; the simulated host sees changes at once and only counts the call",
	iscsiv1alpha2.Iscsi_ListTargetPortals_FullMethodName:     "empty request; lists the registered portals, possibly none",
	systemv1alpha1.System_GetBIOSSerialNumber_FullMethodName: "empty request; the simulated host always has a serial number",
}

// recorder counts, per full method name, the status codes of the calls the
// test clients made, and keeps the error messages.
type recorder struct {
	mu    sync.Mutex
	codes map[string]map[codes.Code]int
	msgs  []string
}

var calls = &recorder{codes: map[string]map[codes.Code]int{}}

// intercept is the clients' unary interceptor.
func (r *recorder) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	st, _ := status.FromError(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.codes[method] == nil {
		r.codes[method] = map[codes.Code]int{}
	}
	r.codes[method][st.Code()]++
	if err != nil {
		r.msgs = append(r.msgs, method+": "+st.Message())
	}
	return err
}

// problems checks what the suite's calls saw: never Unknown (nor Internal,
// which the simulated host has no reason to produce), no secret in an error
// message, and, when coverage is set, every served method called with a
// success and, where it has a failure path, with a failure.
func (r *recorder) problems(coverage bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for m, cs := range r.codes {
		for _, bad := range []codes.Code{codes.Unknown, codes.Internal} {
			if cs[bad] > 0 {
				out = append(out, fmt.Sprintf("%s returned %v %d times", m, bad, cs[bad]))
			}
		}
	}
	for _, msg := range r.msgs {
		for _, s := range secrets {
			if strings.Contains(msg, s) {
				out = append(out, fmt.Sprintf("an error message quotes a secret: %s", msg))
			}
		}
	}
	if coverage {
		methods := servedMethods()
		if len(methods) != 53 {
			out = append(out, fmt.Sprintf("the daemon serves %d methods, the suite expects 53", len(methods)))
		}
		known := map[string]bool{}
		for _, m := range methods {
			known[m] = true
			okCalls, failed := r.split(m)
			_, exempt := noFailurePath[m]
			switch {
			case okCalls == 0:
				out = append(out, m+" never succeeded")
			case failed == 0 && !exempt:
				out = append(out, m+" never failed: add a failure case, or list it in noFailurePath with the reason")
			case failed > 0 && exempt:
				out = append(out, fmt.Sprintf("%s is listed in noFailurePath but failed %d times", m, failed))
			}
		}
		for m := range noFailurePath {
			if !known[m] {
				out = append(out, m+" is listed in noFailurePath but not served")
			}
		}
	}
	sort.Strings(out)
	return out
}

// split returns the successful and failed calls of method. r.mu is held.
func (r *recorder) split(method string) (okCalls, failed int) {
	for c, n := range r.codes[method] {
		if c == codes.OK {
			okCalls += n
		} else {
			failed += n
		}
	}
	return okCalls, failed
}

// summary renders per group-version the calls made, successful and failed,
// and the methods called.
func (r *recorder) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	var total, totalOK, totalFailed int
	for _, sd := range served {
		var okCalls, failed, covered int
		for _, m := range sd.Methods {
			o, f := r.split("/" + sd.ServiceName + "/" + m.MethodName)
			okCalls, failed = okCalls+o, failed+f
			if o+f > 0 {
				covered++
			}
		}
		fmt.Fprintf(&b, "  %-22s %2d/%2d methods  %4d calls  %4d ok  %4d failed\n",
			sd.ServiceName, covered, len(sd.Methods), okCalls+failed, okCalls, failed)
		total, totalOK, totalFailed = total+okCalls+failed, totalOK+okCalls, totalFailed+failed
	}
	fmt.Fprintf(&b, "  %-22s %17d calls  %4d ok  %4d failed\n", "total", total, totalOK, totalFailed)
	return b.String()
}

// filtered reports whether -run or -skip selected part of the suite, when
// coverage cannot be judged.
func filtered() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The daemon logs every call, with redacted payloads at -v=5. Keep the
	// log to check it for secrets, and show it only when asked.
	log := &syncbuf.Buffer{}
	var out io.Writer = log
	if *showLog {
		out = io.MultiWriter(log, os.Stderr)
	}
	if err := klogcapture.Redirect(out, 5); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	code := m.Run()
	klog.Flush()

	full := code == 0 && !filtered() && unixSockets
	problems := calls.problems(full)
	daemonLog := log.String()
	for _, s := range secrets {
		if strings.Contains(daemonLog, s) {
			problems = append(problems, "the daemon's log contains a secret")
			break
		}
	}
	if full && !strings.Contains(daemonLog, "REDACTED") {
		problems = append(problems, "the daemon's payload log shows no REDACTED secret: were payloads logged?")
	}
	if testing.Verbose() {
		fmt.Printf("e2e: status codes seen by the clients, per group-version:\n%s", calls.summary())
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d problems across the suite:\n  %s\n", len(problems), strings.Join(problems, "\n  "))
		if code == 0 {
			code = 1
		}
		fmt.Println("FAIL")
	}
	os.Exit(code)
}
