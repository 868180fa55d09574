//go:build !windows

package server

import "context"

// osVolumeMounts is nil on Linux: the Linux backend answers only for
// paths inside its working directories, so it cannot say that a volume
// is mounted at / or /boot, and confinement fails closed there.
var osVolumeMounts func(context.Context, string) ([]string, error)
