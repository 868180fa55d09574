//go:build windows

package files

// New returns the Windows filesystem backend. It needs no setup; creating
// symbolic links needs SeCreateSymbolicLinkPrivilege at call time.
func New() (*Host, error) { return newHost(winAPI{}), nil }
