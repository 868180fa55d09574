package main

import (
	"sync"
	"time"
)

// progressInterval is how often the progress line is rewritten.
var progressInterval = time.Second

// progress shows, on a terminal, what a call that can take long (a
// format, a resize, an iSCSI login) is doing and for how long, rewriting
// one line on stderr: "Formatting volume X... 3s". The returned function
// erases the line, so the command's own output follows on a clean line.
// Without a terminal on stderr (a script, a log) nothing is written: a
// line of carriage returns is noise in a file.
func (c *call) progress(what string) func() {
	if c.app.stderrTerminal == nil || !c.app.stderrTerminal() {
		return func() {}
	}
	start := time.Now()
	show := func() {
		say(c.app.stderr, "\r\033[K%s... %s", what, time.Since(start).Round(time.Second))
	}
	show()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				show()
			case <-done:
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		say(c.app.stderr, "\r\033[K")
	}
}
