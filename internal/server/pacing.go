package server

import (
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
