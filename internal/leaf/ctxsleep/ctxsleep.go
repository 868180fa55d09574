// Package ctxsleep waits for a while unless a context ends first: the
// pause between retries and polls of the Windows backends (a busy iSCSI
// initiator, a service still starting), which must stop at once when the
// call that waits is canceled.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends; it returns ctx.Err() in that case and
// nil after a full wait. The timer is stopped either way, so a canceled
// wait leaves nothing running.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
