// Package keylock serialises work on one object (a disk, a volume, a path)
// while letting work on different objects run in parallel.
//
// Group services take the lock of the object a mutating call changes, so a
// retried call that arrives while the first is still running (kubelet
// retries after its timeout) waits and then sees the finished state instead
// of racing it.
package keylock

import (
	"context"
	"sync"
)

// Locks is a set of named locks. The zero value is ready to use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*entry
}

type entry struct {
	ch      chan struct{} // holds one token while the lock is held
	waiters int           // callers holding or waiting for the lock
}

// Lock takes the lock named key, waiting while another caller holds it. It
// returns a function that releases the lock, or ctx's error if ctx ends
// first.
func (l *Locks) Lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*entry)
	}
	e, ok := l.locks[key]
	if !ok {
		e = &entry{ch: make(chan struct{}, 1)}
		l.locks[key] = e
	}
	e.waiters++
	l.mu.Unlock()

	select {
	case e.ch <- struct{}{}:
		return func() { l.release(key, e) }, nil
	case <-ctx.Done():
		l.forget(key, e)
		return nil, ctx.Err()
	}
}

func (l *Locks) release(key string, e *entry) {
	<-e.ch
	l.forget(key, e)
}

func (l *Locks) forget(key string, e *entry) {
	l.mu.Lock()
	e.waiters--
	if e.waiters == 0 {
		delete(l.locks, key)
	}
	l.mu.Unlock()
}

// Len returns how many keys are held or waited for; tests use it to check
// that nothing leaks.
func (l *Locks) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
