//go:build !linux

package hostset

import (
	"fmt"
	"runtime"
)

// newLinux refuses: the Linux backends drive Linux block devices, mounts
// and services.
func newLinux(Config) (Set, error) {
	return Set{}, fmt.Errorf("--host=linux runs only on Linux; this is %s", runtime.GOOS)
}
