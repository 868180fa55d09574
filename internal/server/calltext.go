package server

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// callText writes the lines of successful calls in klog's text format
// itself, to the writer klog writes its text to (Config.CallLogText).
//
// The line is what klog.InfoS writes for it, byte for byte but for the
// file:line in the header (this file's, where the writer is made):
//
//	I1202 10:44:03.409768   21207 calltext.go:75] "call" endpoint="csi-proxy-filesystem-v1" method="/v1.Filesystem/PathExists" caller="pid 1 uid 0 gid 0" code="OK" duration="163.619µs"
//
// klog's structured formatting finds the caller's source line with
// runtime.Caller and encodes each value through reflection and
// fmt.Stringer: with a line for every call (-v=2, the shipped verbosity)
// that was the call log's whole cost, 8% of the daemon's CPU under 16
// drivers (issue 26). A value with a line break, which klog would
// write as an indented block, is left to klog (ok false).
type callText struct {
	w    io.Writer
	site string // "calltext.go:NN": where the writer was made, for the header
	pid  int
	pool sync.Pool
	// second is the header's date and time up to the second, kept for
	// the lines of one second: lines come by the thousand a second, and
	// splitting a time into its calendar fields is a third of a line's
	// formatting.
	second atomic.Pointer[headerSecond]
}

// headerSecond is "Lmmdd hh:mm:ss." of the second starting at unix.
type headerSecond struct {
	unix   int64
	prefix []byte
}

func newCallText(w io.Writer) *callText {
	t := &callText{w: w, pid: os.Getpid(), pool: sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}}
	_, file, line, _ := runtime.Caller(0)
	t.site = filepath.Base(file) + ":" + strconv.Itoa(line)
	return t
}

// write writes l, or reports that klog must (ok false).
func (t *callText) write(l callLine, now time.Time) (ok bool) {
	for _, s := range []string{l.endpoint, l.method, l.caller} {
		if strings.IndexByte(s, '\n') >= 0 {
			return false
		}
	}
	bp := t.pool.Get().(*[]byte)
	b := t.format((*bp)[:0], l, now)
	_, _ = t.w.Write(b) // as klog: a log line is never worth failing a call
	*bp = b
	t.pool.Put(bp)
	return true
}

// format appends l's line as klog writes an info line.
func (t *callText) format(b []byte, l callLine, now time.Time) []byte {
	sec := now.Unix()
	hs := t.second.Load()
	if hs == nil || hs.unix != sec {
		hs = &headerSecond{unix: sec, prefix: appendKlogSecond(nil, now)}
		t.second.Store(hs)
	}
	b = append(b, hs.prefix...)
	b = appendKlogHeaderRest(b, now, t.pid, t.site)
	b = append(b, `"call"`...)
	b = appendKV(b, "endpoint", l.endpoint)
	b = appendKV(b, "method", l.method)
	b = appendKV(b, "caller", l.caller)
	b = appendKV(b, "code", l.code.String())
	b = appendKV(b, "duration", l.duration.String())
	return append(b, '\n')
}

// appendKlogSecond appends klog's info header up to its second:
// "Lmmdd hh:mm:ss."; appendKlogHeaderRest the rest.
func appendKlogSecond(b []byte, now time.Time) []byte {
	_, month, day := now.Date()
	hour, minute, second := now.Clock()
	b = append(b, 'I')
	b = appendPadded(b, int(month), 2, '0')
	b = appendPadded(b, day, 2, '0')
	b = append(b, ' ')
	b = appendPadded(b, hour, 2, '0')
	b = append(b, ':')
	b = appendPadded(b, minute, 2, '0')
	b = append(b, ':')
	b = appendPadded(b, second, 2, '0')
	return append(b, '.')
}

// appendKlogHeaderRest appends the rest of klog's info header: the
// microseconds, the process ID right-aligned in 7 columns, file:line and
// "] ".
func appendKlogHeaderRest(b []byte, now time.Time, pid int, site string) []byte {
	b = appendPadded(b, now.Nanosecond()/1000, 6, '0')
	b = append(b, ' ')
	b = appendPadded(b, pid, 7, ' ')
	b = append(b, ' ')
	b = append(b, site...)
	return append(b, "] "...)
}

// appendPadded appends n right-aligned in width columns, filled with pad
// (klog's nDigits; a wider number is written whole).
func appendPadded(b []byte, n, width int, pad byte) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i := len(d); i < width; i++ {
		b = append(b, pad)
	}
	return append(b, d...)
}

// appendKV appends a key and a one-line string value as klog does:
// ` key="value"`, quoted by strconv.Quote's rules. A value of printable
// ASCII without quote or backslash (endpoints, methods and most callers)
// is copied between quotes as it is, which is what strconv.Quote makes
// of it, without decoding it rune by rune.
func appendKV(b []byte, key, value string) []byte {
	b = append(b, ' ')
	b = append(b, key...)
	b = append(b, '=')
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, value)
		}
	}
	b = append(b, '"')
	b = append(b, value...)
	return append(b, '"')
}
