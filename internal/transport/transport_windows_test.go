//go:build windows

package transport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var pipeSeq atomic.Int64

// uniqueEndpoint returns an endpoint whose pipe no other test or process
// uses: pipe names are global.
func uniqueEndpoint() Endpoint {
	return Endpoint{Name: fmt.Sprintf("csi-proxy-test%d-%d", os.Getpid(), pipeSeq.Add(1)), Options: DefaultOptions()}
}

func TestPipeListenDial(t *testing.T) {
	ep := uniqueEndpoint()
	if got, want := ep.Address(), `\\.\pipe\`+ep.Name; got != want {
		t.Fatalf("Address() = %s, want %s", got, want)
	}
	l, err := Listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	serveEcho(l)
	// Several clients in a row: the reserved first instance must not
	// swallow any of them (go-winio#313).
	for range 3 {
		roundTrip(t, ep.Address())
	}

	if _, err := Listen(ep); !errors.Is(err, ErrInUse) {
		t.Errorf("second Listen: %v, want ErrInUse", err)
	}
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c, err := Dial(ctx, ep.Address()); err == nil {
		c.Close()
		t.Error("pipe still reachable after Close")
	}
	// The name is free again.
	l2, err := Listen(ep)
	if err != nil {
		t.Fatalf("Listen after Close: %v", err)
	}
	l2.Close()
}

func TestPipeBadSDDL(t *testing.T) {
	ep := uniqueEndpoint()
	ep.PipeSDDL = "not sddl"
	if _, err := Listen(ep); err == nil || !strings.Contains(err.Error(), "security descriptor") {
		t.Errorf("Listen with a bad SDDL: %v", err)
	}
}
