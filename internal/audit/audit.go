// Package audit writes JSON lines for every call that changes the node, and
// optionally every read and every denied call, to a file or to stderr.
//
// A record says which call (its id) and which record of it (phase), when,
// who (the caller's identity), what (endpoint, group, version, method, the
// request with every secret redacted), the policy's decision and rule,
// and how it ended (gRPC code, message, duration):
//
//	{"id":"9f86d081884c7d65","phase":"done","time":"2025-01-02T15:04:05.123456789Z",
//	 "endpoint":"csi-proxy-disk-v1","group":"disk","version":"v1",
//	 "method":"PartitionDisk","full_method":"/v1.Disk/PartitionDisk","kind":"mutate",
//	 "caller":{"pid":4242,"uid":0,"gid":0,"container_id":"0123…","pod_uid":"6f1c…",
//	           "pod_namespace":"kube-system","pod_name":"csi-azuredisk-node-x7k2p","container_name":"azuredisk",
//	           "service_account":"csi-azuredisk-node-sa"},
//	 "decision":"allow","rule":"azuredisk","request":{"disk_number":1},"code":"OK","duration_ms":3.2}
//
// A call that changes the node has two records with the same "id": an
// intent ("phase":"intent", written by Intent before the change, without
// code or duration) and its outcome ("phase":"done", written by Log). The
// caller makes no change unless Intent succeeded, so every change that
// happened has at least its intent on file, even when the outcome could
// not be written or the daemon died during the call. Reads and denials
// have one record, "phase":"done"; so `select(.phase == "done")` is one
// record per call.
//
// Writes are serialised, one write(2) per line, so lines never interleave.
// A write that fails part-way (a full disk, EIO) would leave half a record
// that the next one continues on the same line: in a regular file the
// Logger cuts the file back to its size before the write (ftruncate), and
// where that cannot be done it starts the next record on a new line, so
// every record stays a line of its own; TornWrites counts both. With
// Options.Sync every record is fsynced before Intent or Log returns.
//
// A file is opened for appending and reopened by Reopen, which the daemon
// calls on SIGHUP: rotate by renaming the file and sending SIGHUP
// (logrotate's postrotate), or use copytruncate. A file that was removed
// is created again at its path before the next record; when that fails,
// the record fails.
//
// Every string a record carries is bounded (see MaxRequestString and its
// siblings), its cut-off end replaced by a marker, and nothing is
// HTML-escaped ('<' stays one byte, not six), so what a caller sends
// cannot make a record large. Denials, reads and the would-deny records
// of reads are rate-limited per caller (Options.DenialBurst): past the
// rate they are counted, not written, so a flood of refused calls cannot
// fill the audit filesystem; the count is said on the caller's next
// record of the kind, or by a "summary" record once the caller's window
// ends without one (a timer, one per Logger) and at Close.
//
// A failed write is counted (Failures), logged to the daemon's log with
// the record's ID, method and size (never the record: the daemon's log
// must not take what the audit log could not), and turns the Logger
// unhealthy until a later write succeeds. See docs/security.md.
package audit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// Stderr is the destination that Open reads as "write to stderr".
const Stderr = "-"

// Phases of a record as records spell them: Intent is written before a
// call that changes the node runs, Done when a call has ended (or, for
// reads and denials, is its only record).
const (
	PhaseIntent = "intent"
	PhaseDone   = "done"
	// PhaseSummary is a record of no call: it says how many records of
	// a caller were left out (Suppressed) when no later record of that
	// caller's could (decision Suppressed).
	PhaseSummary = "summary"
)

// Decisions as records spell them.
const (
	Allow = "allow"
	Deny  = "deny"
	// WouldDeny is the decision of a call an audit-only policy
	// (policy.ModeAuditOnly) let through although its rules deny it;
	// the record's Reason says why they would.
	WouldDeny = "would-deny"
	// Suppressed is the decision of a summary record (PhaseSummary).
	Suppressed = "suppressed"
)

// SchemaVersion is the "schema" of every record: readers tell record
// layouts apart by it. v2 added schema, node, request_id and the caller's
// executable, start_time, pod_namespace, pod_name, container_name and
// service_account (issue 16, one release).
const SchemaVersion = "csi-node-proxy.audit/v2"

// RequestIDMetadata is the gRPC metadata key whose value a call's record
// carries as request_id, so a driver's log line and the audit record of
// its call can be joined.
const RequestIDMetadata = "x-request-id"

// Record is one audited call.
type Record struct {
	// ID names the call: its intent and outcome records share it. Intent
	// and Log give a record without one a new ID.
	ID string
	// Time is when the call arrived.
	Time time.Time
	// Endpoint is the endpoint's name, e.g. csi-proxy-disk-v1.
	Endpoint string
	// Group, Version and Method name the call: disk, v1, PartitionDisk.
	Group, Version, Method string
	// FullMethod is gRPC's name of the method, /v1.Disk/PartitionDisk.
	FullMethod string
	// RequestID is what the client sent as RequestIDMetadata; "" when
	// nothing.
	RequestID string
	// Caller is who called.
	Caller identity.Caller
	// Decision is Allow, Deny or WouldDeny; Rule is the allowing rule,
	// Reason the reason of a denial (or of the denial an audit-only
	// policy waived).
	Decision, Rule, Reason string
	// Model is the request as a group model struct (groups/<group>),
	// whatever API version the caller spoke: the call gate sees every
	// call in that one shape. It is written with the model's field
	// names in snake_case and every field its type declares secret
	// redacted by the Logger itself (see RedactModel).
	Model any
	// Code and Message are the call's outcome. Code is gRPC's numbering
	// without gRPC (errdefs.Code), so library mode can audit too.
	Code    errdefs.Code
	Message string
	// Duration is how long the call took.
	Duration time.Duration

	suppressedKind string // a summary's: SuppressedDeny or a sibling
}

// Options configures a Logger.
type Options struct {
	// Reads also audits calls that only read (see Classify); calls that
	// change the node and denied calls are always audited.
	Reads bool
	// Sync fsyncs the file after every record, so a record Intent or Log
	// reported written survives a crash of the node, not only of the
	// daemon. A failed fsync fails the record like a failed write.
	Sync bool
	// Node names the node in every record, so records collected from
	// many nodes stay apart.
	Node string
	// DenialBurst and DenialInterval rate-limit each caller's denial
	// records, and as much again its read records and its would-deny
	// records of reads (each kind its own bucket, SuppressedDeny and its
	// siblings): DenialBurst at once, then one per DenialInterval; the
	// records past the rate are counted (Suppressed) and the caller's
	// next record of the kind says how many, or, when none comes before
	// the caller could write one again, a summary record does. Records
	// of changes are never limited. Zero takes DefaultDenialBurst and
	// DefaultDenialInterval; a negative DenialBurst records everything.
	DenialBurst    int
	DenialInterval time.Duration
	// Reserve is the free space, in bytes, kept on the audit file's file
	// system for the records of changes: below it, denials and reads are
	// not written but counted (Suppressed), so that however many are
	// refused, the intents of legitimate changes still fit and no change
	// fails closed for their sake. Zero takes DefaultReserve; negative
	// keeps nothing back. Only for a file (Open), on Unix.
	Reserve int64
}

// DefaultReserve is the free space kept for the records of changes: 16
// MiB, some thousands of intent and outcome records, room for an operator
// to notice csi_node_proxy_audit_suppressed_denials_total rising.
const DefaultReserve = 16 << 20

// Logger writes audit records. It is safe for concurrent use.
type Logger struct {
	opts Options
	path string // "" for a writer given to New

	mu sync.Mutex
	w  io.Writer
	f  *os.File // w when writing to a file Open opened
	// midLine is set when a write failed part-way and could not be cut
	// back: the file ends in a fragment, so the next record starts with
	// a newline.
	midLine bool

	denials *denialLimiter // nil: every denial and read is recorded
	// flushMu orders the summary records of the limiter's timer before
	// Close's, and both before the file is closed.
	flushMu sync.Mutex

	unhealthy  atomic.Bool
	suppressed atomic.Uint64
	// lowSpaceSkipped counts the records left out for space since the
	// last low-space summary (writeLowSpaceSummary).
	lowSpaceSkipped atomic.Uint64
	failures        atomic.Uint64
	written         atomic.Uint64
	torn            atomic.Uint64
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
	return newLogger(&Logger{opts: o, path: dest, w: f, f: f}), nil
}

// New returns a Logger writing to w.
func New(w io.Writer, o Options) *Logger { return newLogger(&Logger{opts: o, w: w}) }

// newLogger gives l its rate limiter, whose timer writes l's summaries.
func newLogger(l *Logger) *Logger {
	l.denials = newDenialLimiter(l.opts)
	if l.denials != nil {
		l.denials.onDue = l.flushEnded
	}
	return l
}

func newDenialLimiter(o Options) *denialLimiter {
	if o.DenialBurst < 0 {
		return nil
	}
	d := &denialLimiter{burst: float64(o.DenialBurst), interval: o.DenialInterval, callers: map[string]*denialBucket{}}
	if d.burst == 0 {
		d.burst = DefaultDenialBurst
	}
	if d.interval <= 0 {
		d.interval = DefaultDenialInterval
	}
	return d
}

// Suppressed returns how many records were left out: denials, reads and
// would-deny records of reads of a caller past its rate
// (Options.DenialBurst), and denials and reads while the audit file
// system had less than Options.Reserve free.
func (l *Logger) Suppressed() uint64 { return l.suppressed.Load() }

func openFile(path string) (*os.File, error) {
	// O_NOFOLLOW: a symbolic link planted at the path would have the
	// daemon append to (and create) whatever file it points at.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
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

// TornWrites returns how many records failed after part of them reached
// the file (a short write, or a failed fsync with Sync): each was cut
// back, or, where that failed, the next record began on a new line.
func (l *Logger) TornWrites() uint64 { return l.torn.Load() }

// NewID returns a new call ID: 16 random hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Intent writes the intent record of a call that is about to change the
// node, giving r an ID first if it has none; Log writes its outcome under
// the same ID. The caller must not make the change when Intent fails: the
// failure is returned, counted, logged to the daemon's log with the
// record, and makes the Logger unhealthy until a write succeeds.
func (l *Logger) Intent(r *Record) error {
	if r.ID == "" {
		r.ID = NewID()
	}
	return l.write(*r, PhaseIntent, 0)
}

// Log writes r as one line, the outcome ("done") record of a call. A
// failure is returned, counted, logged to the daemon's log with the
// record's ID, method and size, and makes the Logger unhealthy until a
// write succeeds.
//
// A denial (Decision Deny), a read or a would-deny read of a caller past
// its rate is not written but counted (Suppressed), and Log returns nil:
// what the call does is decided either way. The caller's next record of
// the kind carries the count, or a summary record does. The outcome of a
// call that changes the node and was let through is always written.
func (l *Logger) Log(r Record) error {
	if r.ID == "" {
		r.ID = NewID()
	}
	read := Classify(r.Method) == Read
	if r.Decision == Deny || read {
		if l.lowOnSpace() {
			l.suppressed.Add(1)
			l.lowSpaceSkipped.Add(1)
			return nil
		}
		l.writeLowSpaceSummary()
	}
	var suppressed uint64
	if kind := limitedKind(r.Decision, read); kind != "" && l.denials != nil {
		ok, n := l.denials.admit(kind, denialKey(r.Caller), r.Caller, time.Now())
		if !ok {
			l.suppressed.Add(1)
			return nil
		}
		suppressed = n
	}
	return l.write(r, PhaseDone, suppressed)
}

// limitedKind is the kind of rate-limited record a done record of
// decision and read is, or "" for one never limited: the outcome of a
// change that was let through (allowed, or waived by an audit-only
// policy), whose intent is on file and which did happen.
func limitedKind(decision string, read bool) string {
	switch {
	case decision == Deny:
		return SuppressedDeny
	case !read:
		return ""
	case decision == WouldDeny:
		return SuppressedWouldDeny
	}
	return SuppressedRead
}

// flushEnded writes the summaries of the windows that have ended: the
// limiter's timer runs it.
func (l *Logger) flushEnded() {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeSummaries(l.denials.ended(time.Now()))
}

// writeSummaries writes a summary record for each window (a failure is
// counted and logged by write, as for any record).
func (l *Logger) writeSummaries(sums []summary) {
	for _, s := range sums {
		r := Record{ID: NewID(), Time: time.Now(), Caller: s.caller, Decision: Suppressed, suppressedKind: s.kind,
			Reason: fmt.Sprintf("%d %s records of this caller left out: past its rate of %d, then one per %s",
				s.n, s.kind, int(l.denials.burst), l.denials.interval)}
		_ = l.write(r, PhaseSummary, s.n)
	}
}

// writeLowSpaceSummary writes the summary of the records left out for
// space since the last one, if any (a failure is counted and logged by
// write, as for any record).
func (l *Logger) writeLowSpaceSummary() {
	n := l.lowSpaceSkipped.Swap(0)
	if n == 0 {
		return
	}
	r := Record{ID: NewID(), Time: time.Now(), Decision: Suppressed, suppressedKind: SuppressedLowSpace,
		Reason: fmt.Sprintf("%d denial and read records left out: the audit file system had less free space than the reserve kept for the records of changes", n)}
	_ = l.write(r, PhaseSummary, n)
}

func (l *Logger) write(r Record, phase string, suppressed uint64) error {
	b, err := l.encode(r, phase, suppressed)
	if err != nil {
		// Cannot happen for the types above; never write half a record.
		l.fail(err, r, phase, 0)
		return err
	}
	l.mu.Lock()
	err = l.writeLocked(b)
	l.mu.Unlock()
	if err != nil {
		l.fail(err, r, phase, len(b))
		return fmt.Errorf("audit log: %w", err)
	}
	l.unhealthy.Store(false)
	l.written.Add(1)
	return nil
}

// lowOnSpace tells whether the audit file's file system has less free
// space than the reserve kept for the records of changes.
func (l *Logger) lowOnSpace() bool {
	reserve := l.opts.Reserve
	if reserve == 0 {
		reserve = DefaultReserve
	}
	if reserve < 0 {
		return false
	}
	l.mu.Lock()
	f := l.f
	l.mu.Unlock()
	if f == nil {
		return false
	}
	free, ok := freeSpace(f)
	return ok && free < reserve
}

// freeSpace is fileSystemFree; tests replace it.
var freeSpace = fileSystemFree

// truncater is a file whose end can be cut back: *os.File.
type truncater interface {
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	Sync() error
}

// reopenRemovedLocked creates the audit file again at its path when the
// open one, whose Stat is fi, was removed (a rotation without SIGHUP, an
// operator's rm): records written to a removed file are lost to every
// reader, so when the path cannot be opened the record fails instead. A
// renamed file still has a name and stays in use until Reopen. It tells
// whether the file is a new one.
func (l *Logger) reopenRemovedLocked(fi os.FileInfo) (bool, error) {
	if l.f == nil || l.path == "" || fi == nil || !removed(fi) {
		return false, nil
	}
	f, err := openFile(l.path)
	if err != nil {
		return false, fmt.Errorf("the file was removed and cannot be created again: %w", err)
	}
	_ = l.f.Close() // removed: nothing in it can be read any more
	l.w, l.f, l.midLine = f, f, false
	return true, nil
}

// writeLocked writes line (a record and its newline) with l.mu held, so
// that the file ends at a record's end afterwards whatever happens: a
// write that fails part-way is cut back, in a regular file, to the size
// the file had before it; otherwise the next record starts on a new line.
func (l *Logger) writeLocked(line []byte) error {
	// One fstat tells both whether the file was removed and the size to
	// cut a failed write back to (the audit file is l.w as well as l.f).
	f, _ := l.w.(truncater)
	fi := stat(f)
	reopened, err := l.reopenRemovedLocked(fi)
	if err != nil {
		return err
	}
	if reopened {
		f, _ = l.w.(truncater)
		fi = stat(f)
	}
	if l.midLine {
		line = append([]byte{'\n'}, line...)
	}
	size := int64(-1) // unknown: cannot cut back
	if fi != nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	n, err := l.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err == nil && l.opts.Sync && size >= 0 { // pipes and terminals cannot be synced
		if err = f.Sync(); err != nil {
			n = len(line) // the record is in the file, maybe not on disk: cut it back too
		}
	}
	if err == nil {
		l.midLine = false
		return nil
	}
	if n == 0 {
		return err
	}
	l.torn.Add(1)
	if size >= 0 {
		if terr := f.Truncate(size); terr == nil {
			return err // the file is as before the write; midLine unchanged
		}
	}
	// Part of the line is in the file for good. The line holds newlines
	// only at its ends (JSON escapes the others), so the file is at a
	// line's end exactly when the last byte written is one.
	l.midLine = line[n-1] != '\n'
	return err
}

// stat is f's FileInfo, or nil when f is nil or Stat fails (a failing
// Stat fails the write too, or it goes through).
func stat(f truncater) os.FileInfo {
	if f == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	return fi
}

// fail counts and logs a record that was not written. The daemon's log
// gets what finds the call (its ID, endpoint, method, phase) and the
// record's size, never the record itself: a caller's huge request would
// otherwise move from the full audit filesystem into the daemon's log
// (it once made a 28 MB log line).
func (l *Logger) fail(err error, r Record, phase string, size int) {
	l.failures.Add(1)
	l.unhealthy.Store(true)
	klog.ErrorS(err, "Audit record not written; calls that change the node are refused until the audit log accepts writes again",
		"path", l.path, "id", r.ID, "phase", phase, "endpoint", Truncate(r.Endpoint, MaxCallerString),
		"method", Truncate(r.FullMethod, MaxCallerString), "bytes", size)
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

// Close writes a summary record for every caller with records left out
// since its last one (Options.DenialBurst), stops the limiter's timer and
// closes the audit file, if any. Records logged afterwards fail (for a
// file; to a writer given to New they are still written).
func (l *Logger) Close() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if l.denials != nil {
		l.writeSummaries(l.denials.close())
	}
	l.writeLowSpaceSummary() // whatever the space: the last chance to say records are missing
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
