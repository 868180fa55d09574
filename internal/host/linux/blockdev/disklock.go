package blockdev

import (
	"context"
	"sync"
	"time"
)

// diskLock returns the lock of the disk with the kernel name.
func (b *Backend) diskLock(name string) *diskLock {
	b.mu.Lock()
	defer b.mu.Unlock()
	lk := b.diskLocks[name]
	if lk == nil {
		lk = &diskLock{ch: make(chan struct{}, 1)}
		b.diskLocks[name] = lk
	}
	return lk
}

// diskLock is a per-disk mutex that a waiter can give up on, and that
// tells how long it has been held: a holder stuck in a read of a disk that
// does not answer is how scans learn not to wait for that disk.
type diskLock struct {
	ch    chan struct{}
	mu    sync.Mutex
	since time.Time // when the current holder took it; zero when free
}

func (l *diskLock) lock(ctx context.Context) error {
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil { // both were ready: the waiter gave up
		<-l.ch
		return err
	}
	l.mu.Lock()
	l.since = time.Now()
	l.mu.Unlock()
	return nil
}

func (l *diskLock) unlock() {
	l.mu.Lock()
	l.since = time.Time{}
	l.mu.Unlock()
	<-l.ch
}

// heldFor tells how long the lock has been held; 0 when it is free.
func (l *diskLock) heldFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		return 0
	}
	return time.Since(l.since)
}
