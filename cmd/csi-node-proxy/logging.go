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

// newJSONHandler writes one JSON object a line: time, level ("info" or
// "error"), v (the klog verbosity of an info line), msg, and the line's
// key-value pairs, an error under "err" and a duration as text ("1.5s").
func newJSONHandler(w io.Writer) slog.Handler {
	return verbosityHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{
		// klog has decided already; every record that reaches the
		// handler is written. logr maps V(n) to slog level -n.
		Level: slog.Level(-1 << 20),
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.LevelKey {
				if lvl, ok := a.Value.Any().(slog.Level); ok {
					return slog.String(slog.LevelKey, levelName(lvl))
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

// levelName names a level as Kubernetes' logs do: error or info.
func levelName(l slog.Level) string {
	if l >= slog.LevelError {
		return "error"
	}
	return "info"
}

// verbosityHandler adds the klog verbosity ("v") to info lines.
type verbosityHandler struct{ slog.Handler }

// Handle adds v and writes the record.
func (h verbosityHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		r.AddAttrs(slog.Int("v", max(0, -int(r.Level))))
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
