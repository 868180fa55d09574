// Package hostmetrics is the hand-written half of the golden test's Host
// decorators: what the generated ones call.
package hostmetrics

import "time"

// Observer receives an observation per operation.
type Observer interface {
	ObserveHostOperation(group, operation string, d time.Duration, err error)
}

type timer struct {
	o         Observer
	group, op string
	start     time.Time
}

func begin(o Observer, group, op string) timer {
	return timer{o: o, group: group, op: op, start: time.Now()}
}

func (t timer) done(err error) { t.o.ObserveHostOperation(t.group, t.op, time.Since(t.start), err) }
