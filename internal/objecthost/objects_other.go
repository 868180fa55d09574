//go:build !windows

package objecthost

import "context"

// osVolumeMounts is nil off Windows: there the OS has no call that
// names a volume's mount points by the volume's ID. The Linux block
// backend answers from the mount tables itself (VolumeMounter); a host
// without such a backend leaves confinement failing closed.
var osVolumeMounts func(context.Context, string) ([]string, error)
