//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// newLinuxHost refuses: the Linux backends drive Linux block devices,
// mounts and services.
func newLinuxHost(Config) (hostSet, error) {
	return hostSet{}, fmt.Errorf("--host=linux runs only on Linux; this is %s", runtime.GOOS)
}
