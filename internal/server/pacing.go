package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// pacer spaces events of each key: a burst at once, then one per
// interval (the generic cell rate algorithm: per key, the time at which
// its bucket would be full again). The daemon paces the identification
// of each Unix user's new connections with it (issue 23): identifying a
// caller reads /proc and asks the container runtime, about a fifth of
// the daemon's CPU when a user churned thousands of connections a
// second, taken from everyone else's calls.
type pacer struct {
	interval time.Duration
	burst    int

	mu  sync.Mutex
	tat map[string]time.Time // per key: when its bucket is full again
}

// maxPacedKeys bounds pacer's map: past it, keys whose bucket is full
// again are forgotten (they would start afresh anyway).
const maxPacedKeys = 4096

func newPacer(perSecond, burst int) *pacer {
	if perSecond <= 0 || burst <= 0 {
		return nil
	}
	return &pacer{interval: time.Second / time.Duration(perSecond), burst: burst, tat: map[string]time.Time{}}
}

// reserve takes key's next turn at now and says how long to wait for it;
// ok is false, and nothing is taken, when that wait would be over
// maxWait. A nil pacer never waits.
func (p *pacer) reserve(key string, now time.Time, maxWait time.Duration) (wait time.Duration, ok bool) {
	if p == nil {
		return 0, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tat := p.tat[key]
	if tat.Before(now) {
		tat = now
	}
	// The burst is the room between now and a full bucket's tat.
	wait = tat.Sub(now) - time.Duration(p.burst-1)*p.interval
	if wait < 0 {
		wait = 0
	}
	if wait > maxWait {
		return 0, false
	}
	if len(p.tat) >= maxPacedKeys {
		for k, t := range p.tat {
			if !t.After(now) {
				delete(p.tat, k)
			}
		}
	}
	p.tat[key] = tat.Add(p.interval)
	return wait, true
}

// pending is the wait reserve would give key's next turn at now, without
// taking it; 0 for a nil pacer.
func (p *pacer) pending(key string, now time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	tat := p.tat[key]
	p.mu.Unlock()
	if !tat.After(now) {
		return 0 // also a key never seen: its zero tat minus the burst would overflow
	}
	return max(0, tat.Sub(now)-time.Duration(p.burst-1)*p.interval)
}

// maxEarly bounds what waitTurn keeps of what a client sends before its
// turn: 16 KiB, far more than an HTTP/2 client's preface and settings
// (under 100 bytes); past it, the rest waits in the socket.
const maxEarly = 16 << 10

// waitTurn waits until turn, when conn's user may have it identified,
// reading what the client sends meanwhile, so that a client that gives
// up is seen at once: its connection ends there, and the connection of
// its user's bound that it held is free again (otherwise a client that
// abandons connections fills its user's bound with dead ones). What was
// read is read again first by the handshake, from the connection
// returned. The read deadline is set to restore afterwards: gRPC's
// deadline for the handshake, which waitTurn's own replaced.
func waitTurn(conn net.Conn, turn, restore time.Time) (net.Conn, error) {
	var early []byte
	buf := make([]byte, 512)
	_ = conn.SetReadDeadline(turn) // an error shows in the Read below
	for {
		n, err := conn.Read(buf)
		early = append(early, buf[:n]...)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break // the turn has come
		}
		if err != nil {
			return nil, err // the client closed the connection, or it failed
		}
		if len(early) >= maxEarly {
			time.Sleep(time.Until(turn))
			break
		}
	}
	if err := conn.SetReadDeadline(restore); err != nil {
		return nil, err
	}
	if len(early) == 0 {
		return conn, nil
	}
	return &replayConn{Conn: conn, early: early}, nil
}

// replayConn returns what waitTurn read before the rest of its
// connection. gRPC reads a connection from one goroutine.
type replayConn struct {
	net.Conn
	early []byte
}

// Read returns what was read early first.
func (c *replayConn) Read(b []byte) (int, error) {
	if len(c.early) > 0 {
		n := copy(b, c.early)
		c.early = c.early[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// NetConn returns the connection underneath, for identification.
func (c *replayConn) NetConn() net.Conn { return c.Conn }
