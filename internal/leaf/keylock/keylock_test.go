package keylock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLockSerialisesSameKey(t *testing.T) {
	var l Locks
	ctx := context.Background()
	var mu sync.Mutex
	inside, maxInside := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := l.Lock(ctx, "disk-1")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			if inside > maxInside {
				maxInside = inside
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	if maxInside != 1 {
		t.Fatalf("%d callers held the same key at once, want 1", maxInside)
	}
	if n := l.Len(); n != 0 {
		t.Fatalf("%d keys left after all unlocked", n)
	}
}

func TestLockDifferentKeysDoNotBlock(t *testing.T) {
	var l Locks
	ctx := context.Background()
	unlockA, err := l.Lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer unlockA()
	ctx2, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	unlockB, err := l.Lock(ctx2, "b")
	if err != nil {
		t.Fatalf("key b blocked by key a: %v", err)
	}
	unlockB()
}

func TestLockGivesUpWhenContextEnds(t *testing.T) {
	var l Locks
	unlock, err := l.Lock(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	unlock()
	if n := l.Len(); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}
