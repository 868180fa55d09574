//go:build !linux

package main

// cgroupMemoryLimit reports no limit: outside Linux the daemon does not
// read its own memory limit (a Windows job object's limit is not looked
// up), and GOMEMLIMIT sets one.
func cgroupMemoryLimit() (int64, bool) { return 0, false }
