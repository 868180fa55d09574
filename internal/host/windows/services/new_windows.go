//go:build windows

package services

// New returns the Windows system backend. It does no work until called;
// starting and stopping services needs an administrator (or a token with
// the SERVICE_START / SERVICE_STOP rights on each service).
func New() (*Host, error) { return newHost(winSCM{}, winFirmware{}), nil }
