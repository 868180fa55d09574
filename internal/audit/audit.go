// Package audit writes one JSON line per call that changes the node, and
// optionally per read and per denied call, to a file or to stderr.
//
// A record says when, who (the caller's identity), what (endpoint, group,
// version, method, the request with every secret redacted), the policy's
// decision and rule, and how it ended (gRPC code, message, duration):
//
//	{"time":"2025-01-02T15:04:05.123456789Z","endpoint":"csi-proxy-disk-v1","group":"disk","version":"v1",
//	 "method":"PartitionDisk","full_method":"/v1.Disk/PartitionDisk","kind":"mutate",
//	 "caller":{"pid":4242,"uid":0,"gid":0,"container_id":"0123…","pod_uid":"6f1c…"},
//	 "decision":"allow","rule":"azuredisk","request":{"disk_number":1},"code":"OK","duration_ms":3.2}
//
// Writes are serialised, one write(2) per line, so lines never interleave.
// A file is opened for appending and reopened by Reopen, which the daemon
// calls on SIGHUP: rotate by renaming the file and sending SIGHUP
// (logrotate's postrotate), or use copytruncate.
//
// When a write fails the Logger turns unhealthy until a later write
// succeeds; the server then refuses calls that change the node
// (codes.Unavailable) rather than make changes nobody can audit. The record
// that could not be written goes to the daemon's log instead. See
// docs/security.md.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// Stderr is the destination that Open reads as "write to stderr".
const Stderr = "-"

// Decisions as records spell them.
const (
	Allow = "allow"
	Deny  = "deny"
)

// Record is one audited call.
type Record struct {
	// Time is when the call arrived.
	Time time.Time
	// Endpoint is the endpoint's name, e.g. csi-proxy-disk-v1.
	Endpoint string
	// Group, Version and Method name the call: disk, v1, PartitionDisk.
	Group, Version, Method string
	// FullMethod is gRPC's name of the method, /v1.Disk/PartitionDisk.
	FullMethod string
	// Caller is who called.
	Caller identity.Caller
	// Decision is Allow or Deny; Rule is the allowing rule, Reason the
	// reason of a denial.
	Decision, Rule, Reason string
	// Request is the request message; the Logger redacts it.
	Request proto.Message
	// Model is the request as a group model struct (groups/<group>), for
	// callers that have no wire message: library mode. It is written
	// when Request is nil, with the wire's field names (snake_case) and
	// every secret replaced by the Logger itself (see RedactModel), so
	// it never depends on Options.Redact.
	Model any
	// Code and Message are the call's outcome.
	Code    codes.Code
	Message string
	// Duration is how long the call took.
	Duration time.Duration
}

// Options configures a Logger.
type Options struct {
	// Reads also audits calls that only read (see Classify); calls that
	// change the node and denied calls are always audited.
	Reads bool
	// Redact returns a copy of a request that is safe to write, with
	// secrets replaced. Without it requests are left out of the records.
	Redact func(proto.Message) proto.Message
}

// Logger writes audit records. It is safe for concurrent use.
type Logger struct {
	opts Options
	path string // "" for a writer given to New

	mu sync.Mutex
	w  io.Writer
	f  *os.File // w when writing to a file Open opened

	unhealthy atomic.Bool
	failures  atomic.Uint64
	written   atomic.Uint64
}

// Open returns a Logger writing to the file at dest, created (mode 0600)
// when missing and appended to, or to stderr when dest is Stderr.
func Open(dest string, o Options) (*Logger, error) {
	if dest == Stderr {
		return New(os.Stderr, o), nil
	}
	if dest == "" {
		return nil, errors.New("audit log: no destination")
	}
	f, err := openFile(dest)
	if err != nil {
		return nil, err
	}
	return &Logger{opts: o, path: dest, w: f, f: f}, nil
}

// New returns a Logger writing to w.
func New(w io.Writer, o Options) *Logger { return &Logger{opts: o, w: w} }

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return f, nil
}

// Wants tells whether a call of this kind, with this decision, is audited.
func (l *Logger) Wants(method string, denied bool) bool {
	return l != nil && (denied || l.opts.Reads || Classify(method) != Read)
}

// Healthy tells whether the last write succeeded (or nothing was written
// yet).
func (l *Logger) Healthy() bool { return !l.unhealthy.Load() }

// Failures returns how many records could not be written.
func (l *Logger) Failures() uint64 { return l.failures.Load() }

// Written returns how many records were written.
func (l *Logger) Written() uint64 { return l.written.Load() }

// Log writes r as one line. A failure is returned, counted, logged to the
// daemon's log with the record, and makes the Logger unhealthy until a
// write succeeds.
func (l *Logger) Log(r Record) error {
	b, err := l.encode(r)
	if err != nil {
		// Cannot happen for the types above; never write half a record.
		l.fail(err, nil)
		return err
	}
	l.mu.Lock()
	_, err = l.w.Write(b)
	l.mu.Unlock()
	if err != nil {
		l.fail(err, b)
		return fmt.Errorf("audit log: %w", err)
	}
	l.unhealthy.Store(false)
	l.written.Add(1)
	return nil
}

func (l *Logger) fail(err error, line []byte) {
	l.failures.Add(1)
	l.unhealthy.Store(true)
	klog.ErrorS(err, "Audit record not written; calls that change the node are refused until the audit log accepts writes again",
		"path", l.path, "record", strings.TrimSuffix(string(line), "\n"))
}

// Reopen reopens the audit file at its path, for log rotation: records
// written after it returns go to the file now at that path. When the file
// cannot be opened the old one stays in use and the error is returned. A
// Logger writing to stderr or a given writer has nothing to reopen. After
// Close (even one racing Reopen) it opens nothing and fails: a closed
// Logger stays closed, and no file is left open behind it.
func (l *Logger) Reopen() error {
	if l.path == "" {
		return nil
	}
	f, err := openFile(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	if old == nil { // closed
		l.mu.Unlock()
		_ = f.Close() // opened for nothing; the error that matters is below
		return fmt.Errorf("audit log %s: %w", l.path, os.ErrClosed)
	}
	l.w, l.f = f, f
	l.mu.Unlock()
	return old.Close()
}

// Close closes the audit file, if any. Records logged afterwards fail.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.w = closedWriter{}
	l.f = nil
	return err
}

type closedWriter struct{}

func (closedWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// line is a record as written.
type line struct {
	Time       string          `json:"time"`
	Endpoint   string          `json:"endpoint"`
	Group      string          `json:"group"`
	Version    string          `json:"version"`
	Method     string          `json:"method"`
	FullMethod string          `json:"full_method"`
	Kind       string          `json:"kind"`
	Caller     caller          `json:"caller"`
	Decision   string          `json:"decision"`
	Rule       string          `json:"rule,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Request    json.RawMessage `json:"request,omitempty"`
	Code       string          `json:"code"`
	Message    string          `json:"message,omitempty"`
	DurationMS float64         `json:"duration_ms"`
}

// caller is identity.Caller as written: unknown fields are left out, and
// the Unix IDs only appear when known, so uid 0 always means root.
type caller struct {
	PID              int      `json:"pid,omitempty"`
	UID              *uint32  `json:"uid,omitempty"`
	GID              *uint32  `json:"gid,omitempty"`
	Groups           []uint32 `json:"groups,omitempty"`
	ContainerID      string   `json:"container_id,omitempty"`
	PodUID           string   `json:"pod_uid,omitempty"`
	Runtime          string   `json:"runtime,omitempty"`
	WindowsSID       string   `json:"windows_sid,omitempty"`
	WindowsAccount   string   `json:"windows_account,omitempty"`
	WindowsGroupSIDs []string `json:"windows_group_sids,omitempty"`
	Incomplete       string   `json:"incomplete,omitempty"`
}

var requestJSON = protojson.MarshalOptions{UseProtoNames: true}

// encode renders r as one line of JSON, newline included.
func (l *Logger) encode(r Record) ([]byte, error) {
	c := r.Caller
	out := line{
		Time:       r.Time.UTC().Format(time.RFC3339Nano),
		Endpoint:   r.Endpoint,
		Group:      r.Group,
		Version:    r.Version,
		Method:     r.Method,
		FullMethod: r.FullMethod,
		Kind:       Classify(r.Method).String(),
		Caller: caller{
			PID: c.PID, Groups: c.Groups, ContainerID: c.ContainerID, PodUID: c.PodUID, Runtime: c.Runtime,
			WindowsSID: c.WindowsSID, WindowsAccount: c.WindowsAccount, WindowsGroupSIDs: c.WindowsGroupSIDs,
			Incomplete: c.Incomplete,
		},
		Decision:   r.Decision,
		Rule:       r.Rule,
		Reason:     r.Reason,
		Code:       r.Code.String(),
		Message:    r.Message,
		DurationMS: float64(r.Duration.Microseconds()) / 1000,
	}
	if c.HasUnixIDs {
		uid, gid := c.UID, c.GID
		out.Caller.UID, out.Caller.GID = &uid, &gid
	}
	if r.Request == nil && r.Model != nil {
		b, err := json.Marshal(RedactModel(r.Model))
		if err != nil {
			b, _ = json.Marshal(fmt.Sprintf("<%T: %v>", r.Model, err)) // marshalling a string cannot fail
		}
		out.Request = b
	}
	if r.Request != nil && l.opts.Redact != nil {
		if m := l.opts.Redact(r.Request); m != nil {
			b, err := requestJSON.Marshal(m)
			if err != nil {
				b, _ = json.Marshal(fmt.Sprintf("<%T: %v>", r.Request, err)) // marshalling a string cannot fail
			}
			out.Request = b
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
