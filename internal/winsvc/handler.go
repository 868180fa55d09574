package winsvc

import (
	"context"
	"time"
)

// Runner is the daemon as the service handler runs it: it serves until ctx
// is done, then shuts down gracefully and returns; nil means a clean
// shutdown. args are the service's start arguments: args[0] is the
// service's name, the rest what "sc.exe start <name> ..." added (the
// daemon's flags are in its command line, os.Args, not here). It calls
// Notifier.Started once it serves, and Notifier.Stopping when it begins
// to drain. ctx.Err() != nil when it returns means the SCM asked it to
// stop.
type Runner func(ctx context.Context, args []string, n Notifier) error

// Notifier is how a Runner reports progress to the handler, which reports
// it to the SCM.
type Notifier interface {
	// Started says the daemon serves: the service is Running.
	Started()
	// Stopping says the daemon has stopped accepting calls and lets those
	// in flight finish for at most drain: the service is StopPending with
	// a wait hint covering drain.
	Stopping(drain time.Duration)
}

// Defaults of Handler.
const (
	// DefaultStartWaitHint is the wait hint while starting; the checkpoint
	// advances every Tick, so a slow start is not taken for a hang.
	DefaultStartWaitHint = 30 * time.Second
	// DefaultStopWaitHint is the wait hint from the Stop control until the
	// daemon reports how long its drain may take.
	DefaultStopWaitHint = 10 * time.Second
	// DefaultTick is how often a pending state reports progress.
	DefaultTick = time.Second
	// stopMargin is added to the drain time in the stop wait hint: the
	// endpoints are closed and the log flushed after the drain.
	stopMargin = 5 * time.Second
)

// ExitFailure is the service-specific exit code of a daemon that failed
// on its own (not at the SCM's request): the SCM applies the recovery
// actions to it.
const ExitFailure = 1

// Handler is the service's control handler, platform-neutral: Execute has
// svc.Handler's shape with this package's mirror types, and Run (Windows)
// adapts it to svc.Run.
//
// It reports StartPending until the Runner says it started, then Running,
// accepting Stop and Shutdown. Stop and Shutdown cancel the Runner's
// context, which makes the daemon drain exactly as after SIGTERM; the
// handler reports StopPending with a rising checkpoint and a wait hint
// covering the drain until the Runner returns. Interrogate is answered
// with the current status in every state; other controls are ignored.
//
// Execute's return value is the exit code the SCM records with the final
// Stopped status: 0 after a stop the SCM asked for (even if calls had to
// be cut off when the drain time ran out: the stop was wanted, and a
// non-zero code would make the SCM restart the service), or when the
// daemon returned nil; service-specific ExitFailure when the daemon failed
// on its own, which the recovery actions Install sets turn into a restart.
type Handler struct {
	// Run is the daemon.
	Run Runner
	// StartWaitHint, StopWaitHint and Tick override the defaults
	// DefaultStartWaitHint, DefaultStopWaitHint and DefaultTick.
	StartWaitHint, StopWaitHint, Tick time.Duration
}

// note is a Notifier call, passed to the handler's loop.
type note struct {
	started bool
	drain   time.Duration
}

// notifier sends Notifier calls to the handler's loop.
type notifier struct{ c chan<- note }

// Started implements Notifier.
func (n notifier) Started() { n.c <- note{started: true} }

// Stopping implements Notifier.
func (n notifier) Stopping(drain time.Duration) { n.c <- note{drain: drain} }

func ms(d time.Duration) uint32 { return uint32(d / time.Millisecond) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Execute runs the service: args are the service's start arguments
// (args[0] is its name), r delivers the SCM's controls and s takes the
// status reports. It returns when the Runner has returned.
func (h *Handler) Execute(args []string, r <-chan ChangeRequest, s chan<- Status) (svcSpecificEC bool, exitCode uint32) {
	tick := orDefault(h.Tick, DefaultTick)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes := make(chan note)
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx, args, notifier{notes}) }()

	cur := Status{State: StartPending, CheckPoint: 1, WaitHint: ms(orDefault(h.StartWaitHint, DefaultStartWaitHint))}
	s <- cur
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	stopRequested := false
	stopping := func(hint time.Duration) {
		if cur.State != StopPending {
			cur = Status{State: StopPending}
		}
		cur.CheckPoint++
		cur.WaitHint = ms(hint)
		s <- cur
	}
	for {
		select {
		case c := <-r:
			switch c.Cmd {
			case Interrogate:
				s <- cur
			case Stop, Shutdown:
				if !stopRequested {
					stopRequested = true
					cancel()
					stopping(orDefault(h.StopWaitHint, DefaultStopWaitHint))
				}
			}
		case n := <-notes:
			switch {
			case n.started:
				if cur.State == StartPending {
					cur = Status{State: Running, Accepts: AcceptStop | AcceptShutdown}
					s <- cur
				}
			default:
				stopping(n.drain + stopMargin)
			}
		case <-ticker.C:
			if cur.State == StartPending || cur.State == StopPending {
				cur.CheckPoint++
				s <- cur
			}
		case err := <-done:
			if err != nil && !stopRequested {
				return true, ExitFailure
			}
			return false, 0
		}
	}
}
