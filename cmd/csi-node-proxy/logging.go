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
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// setupLogging switches klog to JSON lines when cfg asks for them, on
// -log_file when logs go to a file (-logtostderr=false), on stderr
// otherwise, and returns the function that switches back and closes the
// file. Text, klog's own format, needs nothing.
func setupLogging(cfg Config) (func(), error) {
	if cfg.LoggingFormat != loggingJSON {
		return func() {}, nil
	}
	kl := klogSettings()
	get := func(f string) string { return kl.Lookup(f).Value.String() }
	var w io.Writer = os.Stderr
	closeFile := func() {}
	if get("logtostderr") == "false" {
		switch file := get("log_file"); {
		case file != "":
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return nil, fmt.Errorf("log file: %w", err)
			}
			w = f
			closeFile = func() { _ = f.Close() } // the last lines are written; nothing to do if closing fails
		case get("log_dir") != "":
			return nil, errors.New("--logging-format=json writes one file: give -log_file instead of -log_dir")
		}
	}
	klog.SetLogger(logr.FromSlogHandler(newJSONHandler(w)))
	return func() {
		klog.ClearLogger()
		closeFile()
	}, nil
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
