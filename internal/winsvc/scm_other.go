//go:build !windows

package winsvc

// Connect returns ErrNotWindows: there is no service control manager.
func Connect() (Manager, error) { return nil, ErrNotWindows }

// Run returns ErrNotWindows: there is no service control manager.
func Run(string, *Handler) error { return ErrNotWindows }

// OpenEventLog returns ErrNotWindows: there is no Windows event log.
func OpenEventLog(string) (EventLog, error) { return nil, ErrNotWindows }
