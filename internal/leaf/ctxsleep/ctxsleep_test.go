package ctxsleep

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleep: a full wait returns nil no sooner than asked; a canceled
// context ends the wait at once with its error.
func TestSleep(t *testing.T) {
	start := time.Now()
	if err := Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Errorf("Sleep = %v, want nil", err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("Sleep returned after %v, want at least 20ms", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(canceled) = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Sleep(canceled) waited %v", d)
	}
}
