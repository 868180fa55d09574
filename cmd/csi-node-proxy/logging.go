package main

// JSON logs (--logging-format=json), the flag and format name the
// Kubernetes components use. Kubernetes' own implementation
// (k8s.io/component-base/logs/json) brings zap and component-base's
// dependency tree into the daemon; log/slog's JSON handler, bridged into
// klog through logr (a dependency klog has already), writes the same kind
// of lines with nothing added. klog keeps deciding what is logged (-v,
// -vmodule); the handler only formats.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/logbatch"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
)

// daemonLogs is the daemon's log output as setupLogging set it up.
type daemonLogs struct {
	// batch groups lines written together into one write; nil where klog
	// buffers its output itself (-log_file, -log_dir) or writes it its
	// own way (-legacy_stderr_threshold_behavior=false).
	batch *logbatch.Writer
	// text is batch when klog writes its text format there with default
	// header flags, so the call log may format its lines itself
	// (server.Config.CallLogText); nil otherwise (JSON, or no batch).
	text *logbatch.Writer
	// close flushes, switches klog back and closes a log file.
	close func()
}

// setupLogging switches klog to JSON lines when cfg asks for them, on
// -log_file when logs go to a file (-logtostderr=false), on stderr
// otherwise. In klog's own text format on stderr (the default) klog still
// formats every line, but hands it to a logbatch.Writer on stderr, so the
// call log can write the lines of calls that ended together with one
// write (server.Config.LogBatch); klog writes to stderr unbuffered, a
// system call a line, while its log files are buffered already. Only at
// the call log's verbosity (-v=2, the shipped one) or above: below it no
// call writes a line.
func setupLogging(cfg Config) (daemonLogs, error) { return setupLoggingTo(cfg, os.Stderr) }

// setupLoggingTo is setupLogging with stderr given, for tests.
func setupLoggingTo(cfg Config, stderr io.Writer) (daemonLogs, error) {
	kl := klogSettings()
	get := func(f string) string { return kl.Lookup(f).Value.String() }
	if cfg.LoggingFormat != loggingJSON {
		// Only klog's plain stderr output is batched; flags that change
		// where lines go or how their header looks keep klog's own writer.
		for f, def := range map[string]string{"logtostderr": "true", "legacy_stderr_threshold_behavior": "true",
			"skip_headers": "false", "add_dir_header": "false", "log_backtrace_at": ":0"} {
			if get(f) != def {
				return daemonLogs{close: func() {}}, nil
			}
		}
		// Below the call log's verbosity no call writes a line, and a
		// logger set in klog costs an allocation on every klog.V: none.
		if v, err := strconv.Atoi(get("v")); err != nil || v < int(server.DefaultCallLogLevel) {
			return daemonLogs{close: func() {}}, nil
		}
		b := logbatch.New(stderr)
		flush := func() { _ = b.Flush() } // nowhere to report a failed write to stderr
		// klog's text logger writes klog's own line format (the same
		// header and key=value encoding) for structured calls; printf
		// calls klog formats itself and hands over whole. klog's -v and
		// -vmodule decide before either is reached, so the text logger
		// itself filters nothing.
		tl := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(b), textlogger.Verbosity(math.MaxInt32)))
		klog.SetLoggerWithOptions(tl, klog.WriteKlogBuffer(b.WriteKlogBuffer), klog.FlushLogger(flush))
		return daemonLogs{batch: b, text: b, close: func() {
			flush()
			klog.ClearLogger()
		}}, nil
	}
	w := stderr
	closeFile := func() {}
	if get("logtostderr") == "false" {
		switch file := get("log_file"); {
		case file != "":
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return daemonLogs{}, fmt.Errorf("log file: %w", err)
			}
			w = f
			closeFile = func() { _ = f.Close() } // the last lines are written; nothing to do if closing fails
		case get("log_dir") != "":
			return daemonLogs{}, errors.New("--logging-format=json writes one file: give -log_file instead of -log_dir")
		}
	}
	b := logbatch.New(w)
	klog.SetLoggerWithOptions(logr.FromSlogHandler(newJSONHandler(b)), klog.FlushLogger(func() { _ = b.Flush() }))
	return daemonLogs{batch: b, close: func() {
		_ = b.Flush() // nowhere left to report a failed write to
		klog.ClearLogger()
		closeFile()
	}}, nil
}

// newJSONHandler writes one JSON object a line with the keys of
// Kubernetes' own JSON format (k8s.io/component-base logs/json/json.go at
// 349fbe06, which configures zap so): "ts", the time as float
// milliseconds since the epoch; "caller", the source file as dir/file.go
// and line; "msg"; "v", the klog verbosity of an info line (error lines
// have none); then the line's key-value pairs, an error under "err" and a
// duration as text ("1.5s"). There is no level key, as there is none in
// Kubernetes' lines: an error line is the one with "err" and without "v".
// A line's own "caller" pair (the peer of a gRPC call) would collide with
// the source location, so JSON writes it as "peer".
func newJSONHandler(w io.Writer) slog.Handler {
	return verbosityHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{
		AddSource: true,
		// klog has decided already; every record that reaches the
		// handler is written. logr maps V(n) to slog level -n.
		Level: slog.Level(-1 << 20),
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 {
				switch a.Key {
				case slog.TimeKey:
					if t, ok := a.Value.Any().(time.Time); ok {
						return slog.Float64("ts", float64(t.UnixNano())/float64(time.Millisecond))
					}
				case slog.LevelKey:
					return slog.Attr{} // dropped: Kubernetes' lines have no level
				case slog.SourceKey:
					if src, ok := a.Value.Any().(*slog.Source); ok {
						return slog.String("caller", shortCaller(src.File, src.Line))
					}
				case "caller":
					return slog.Attr{Key: "peer", Value: a.Value}
				}
			}
			if a.Value.Kind() == slog.KindDuration {
				// "25s", as klog's text shows it, not nanoseconds.
				return slog.String(a.Key, a.Value.Duration().String())
			}
			return a
		},
	})}
}

// shortCaller is zap's short caller form: the file's directory and name
// and the line ("server/interceptors.go:84").
func shortCaller(file string, line int) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
			file = file[j+1:]
		}
	}
	return file + ":" + strconv.Itoa(line)
}

// verbosityHandler adds the klog verbosity ("v") to info lines, right
// after msg as Kubernetes' lines have it.
type verbosityHandler struct{ slog.Handler }

// Handle adds v and writes the record.
func (h verbosityHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		withV := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
		withV.AddAttrs(slog.Int("v", max(0, -int(r.Level))))
		r.Attrs(func(a slog.Attr) bool {
			withV.AddAttrs(a)
			return true
		})
		r = withV
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper around the derived handler.
func (h verbosityHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return verbosityHandler{h.Handler.WithAttrs(as)}
}

// WithGroup keeps the wrapper around the derived handler.
func (h verbosityHandler) WithGroup(name string) slog.Handler {
	return verbosityHandler{h.Handler.WithGroup(name)}
}
