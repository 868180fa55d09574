package winsvc

import "errors"

// ErrNotAService is returned by Run when the process was not started by
// the service control manager (for example, -windows-service typed in a
// console).
var ErrNotAService = errors.New("not running as a Windows service")

// EventLog is the Windows Application event log, as the service writes to
// it: a few lines at start, at stop and on failure, so an operator finds
// out why the service stopped and where its log file is even when the log
// file cannot be written.
type EventLog interface {
	// Info writes an information event.
	Info(msg string) error
	// Warning writes a warning event.
	Warning(msg string) error
	// Error writes an error event.
	Error(msg string) error
	// Close closes the log.
	Close() error
}
