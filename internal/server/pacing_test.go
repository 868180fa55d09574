package server

import (
	"net"
	"testing"
	"time"
)

// TestPacerBurstThenRate: a key gets its burst at once, then one turn per
// interval; a turn past maxWait is refused without being taken; other
// keys are not slowed; a key at rest for long enough has its burst back.
func TestPacerBurstThenRate(t *testing.T) {
	p := newPacer(10, 3) // 100 ms apart after 3
	now := time.Unix(1000, 0)
	for i := range 3 {
		if w, ok := p.reserve("uid:1", now, time.Second); !ok || w != 0 {
			t.Fatalf("turn %d of the burst: wait %v ok %v, want none", i+1, w, ok)
		}
	}
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		if w, ok := p.reserve("uid:1", now, time.Second); !ok || w != want {
			t.Errorf("turn %d past the burst: wait %v ok %v, want %v", i+4, w, ok, want)
		}
	}
	if _, ok := p.reserve("uid:1", now, 250*time.Millisecond); ok {
		t.Error("a turn 300 ms away was given with maxWait 250 ms")
	}
	if w, ok := p.reserve("uid:1", now, time.Second); !ok || w != 300*time.Millisecond {
		t.Errorf("after a refused turn: wait %v ok %v, want 300ms (the refusal took nothing)", w, ok)
	}
	if w, ok := p.reserve("uid:2", now, time.Second); !ok || w != 0 {
		t.Errorf("another key: wait %v ok %v, want none", w, ok)
	}
	later := now.Add(2 * time.Second)
	for i := range 3 {
		if w, ok := p.reserve("uid:1", later, time.Second); !ok || w != 0 {
			t.Errorf("turn %d after a rest: wait %v ok %v, want the burst back", i+1, w, ok)
		}
	}
	var none *pacer
	if w, ok := none.reserve("uid:1", now, 0); !ok || w != 0 {
		t.Errorf("nil pacer: wait %v ok %v", w, ok)
	}
}

// TestPacerForgetsRestedKeys: the map stays bounded however many keys
// come, forgetting those at rest.
func TestPacerForgetsRestedKeys(t *testing.T) {
	p := newPacer(1000, 1)
	now := time.Unix(1000, 0)
	for i := range 3 * maxPacedKeys {
		now = now.Add(time.Millisecond)
		p.reserve(string(rune('a'+i%26))+time.Duration(i).String(), now, time.Second)
	}
	if n := len(p.tat); n > maxPacedKeys {
		t.Errorf("%d keys kept, want at most %d", n, maxPacedKeys)
	}
}

// TestWaitTurnKeepsEarlyBytes: what the client sends while its
// connection waits for its turn is read again first, then the rest; the
// read deadline is the one given back.
func TestWaitTurnKeepsEarlyBytes(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	go func() { _, _ = client.Write([]byte("PRI * HTTP/2.0")) }()
	turn := time.Now().Add(100 * time.Millisecond)
	c, err := waitTurn(server, turn, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if time.Now().Before(turn) {
		t.Error("waitTurn returned before the turn")
	}
	go func() { _, _ = client.Write([]byte(" more")) }()
	got := make([]byte, 0, 32)
	buf := make([]byte, 4)
	for len(got) < len("PRI * HTTP/2.0 more") {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "PRI * HTTP/2.0 more" {
		t.Errorf("read %q, want the early bytes, then the rest", got)
	}
}

// TestWaitTurnSeesClientGiveUp: a client that closes its connection while
// it waits ends the wait at once with an error, so the connection (and
// its place in its user's bound) is freed then, not at its turn.
func TestWaitTurnSeesClientGiveUp(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	time.AfterFunc(20*time.Millisecond, func() { client.Close() })
	start := time.Now()
	if _, err := waitTurn(server, start.Add(5*time.Second), time.Time{}); err == nil {
		t.Fatal("waitTurn on a connection its client closed: no error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waitTurn noticed the close after %v, want at once", d)
	}
}
