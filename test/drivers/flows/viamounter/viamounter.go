// Package viamounter hands the driver conformance flows' MounterPlan the
// shared mounter (client/mounter). It is apart from package flows so that
// flows links no k8s.io/mount-utils: upstreamwire's module imports flows
// and must link nothing but upstream's stubs and the model groups.
package viamounter

import (
	"context"

	"github.com/go-logr/logr"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
)

// New is mounter.New as the flows call it (a flows.NewMounter).
func New(node groups.Node, o flows.MounterOptions) flows.Mounter {
	return adapter{mounter.New(node, mounter.Options{
		Logger:      logr.New(errorSink{o.LogError}),
		SMBStateDir: o.SMBStateDir,
	})}
}

var _ flows.NewMounter = New

// adapter adapts the two methods whose types are the mounter package's.
type adapter struct{ *mounter.Mounter }

// UnmountDevice is the mounter's, offline as its option.
func (m adapter) UnmountDevice(ctx context.Context, target string, offline bool) error {
	return m.Mounter.UnmountDevice(ctx, target, mounter.UnmountDeviceOptions{Offline: offline})
}

// VolumeStats is the mounter's, as the flows' Stats.
func (m adapter) VolumeStats(ctx context.Context, path string) (flows.Stats, error) {
	s, err := m.Mounter.VolumeStats(ctx, path)
	return flows.Stats{Total: s.Total, Used: s.Used, Available: s.Available}, err
}

// errorSink hands what the mounter logs at error level to the flow; Info
// is not needed (logr delivers Error whatever Enabled says).
type errorSink struct {
	onError func(err error, msg string, keysAndValues ...any)
}

// Init implements logr.LogSink; there is nothing to set up.
func (errorSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink: no info line is wanted.
func (errorSink) Enabled(int) bool { return false }

// Info implements logr.LogSink and drops the line.
func (errorSink) Info(int, string, ...any) {}

// WithValues implements logr.LogSink; the values are not needed.
func (s errorSink) WithValues(...any) logr.LogSink { return s }

// WithName implements logr.LogSink; the name is not needed.
func (s errorSink) WithName(string) logr.LogSink { return s }

// Error implements logr.LogSink: it hands the error to the flow.
func (s errorSink) Error(err error, msg string, kv ...any) { s.onError(err, msg, kv...) }
