//go:build !linux && !windows

package identity

// osProcess is never made on this OS: identification is not implemented,
// so there is no process to watch.
type osProcess struct{}

func (osProcess) exited() (bool, error) { return false, ErrLivenessUnknown }

func (osProcess) close() {}

func (osProcess) known() (exited, ok bool) { return false, false }
