package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// Limits of the metrics HTTP server. A scrape reads a few kilobytes of
// headers and writes some hundred kilobytes; anything slower is a stuck or
// hostile client, which must not hold a connection (and a goroutine) open.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	// scrapeTimeout bounds gathering; writeTimeout leaves time to send
	// the result after it.
	scrapeTimeout  = 20 * time.Second
	writeTimeout   = 30 * time.Second
	idleTimeout    = 60 * time.Second
	maxHeaderBytes = 16 << 10
	// readyTimeout bounds one /readyz: probing every endpoint on the
	// node's own sockets or pipes takes milliseconds, so a probe that
	// needs seconds has found a daemon that is not ready.
	readyTimeout = 3 * time.Second
)

// Extra is what the HTTP server answers besides /metrics and /healthz.
type Extra struct {
	// Ready answers GET /readyz: 200 "ok" when it returns nil, 503 with
	// the error otherwise. It is given at most readyTimeout. Nil answers
	// /readyz as /healthz.
	Ready func(context.Context) error
	// Warnings are shown by GET /readyz, one line each after its first
	// ("warning: ..."), ready or not, without making it fail: things an
	// operator must know, such as a policy selecting callers by what the
	// daemon cannot see (server.IdentityWarnings), that a restart would
	// not cure, so taking the daemon out of service would only make it
	// worse. Nil shows none.
	Warnings func() []string
	// JSON are read-only documents, each served at its path (GET) as
	// application/json, built anew for every request.
	JSON map[string]func() any
	// Checks are further named readiness checks, listed by
	// /readyz?verbose after Ready's (named "endpoints"). Add one here to
	// give /readyz a new line; see ReadyCheck.
	Checks []ReadyCheck
}

// ReadyCheck is one named readiness check, as kube-apiserver lists its
// checks in /readyz?verbose ("[+]name ok", "[-]name failed: reason").
type ReadyCheck struct {
	// Name is the check's name in the list: lower case, no spaces.
	Name string
	// Check returns nil when the check passes. It shares Ready's
	// readyTimeout.
	Check func(context.Context) error
	// DegradedOnly makes a failing check a degraded state, not an
	// unready one: it is listed as failed and named in the answer, but
	// /readyz stays 200, for conditions a restart would not cure (a
	// policy that admits no caller), where taking the daemon out of
	// service only makes things worse.
	DegradedOnly bool
}

// checkResult is one check's outcome in a /readyz answer.
type checkResult struct {
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	Reason   string `json:"reason,omitempty"`
	Degraded bool   `json:"degraded_only,omitempty"`
}

// Server serves GET /metrics (the registry, in the Prometheus exposition
// formats), GET /healthz and /livez (200 "ok" while the process runs),
// GET /readyz (200 "ok" while Extra.Ready and Extra.Checks say so; with
// ?verbose the per-check list) and Extra's JSON documents over HTTP
// on TCP. Create it with Serve, end it with Shutdown.
type Server struct {
	http *http.Server
	addr string
	done chan struct{} // closed when Serve has returned
}

// Serve listens on addr, a TCP host:port such as 127.0.0.1:8888 or
// [::1]:8888 (port 0 picks a free port; see Addr), and serves m and x
// there in the background. An address that cannot be listened on is an
// error, returned at once.
func Serve(addr string, m *Metrics, x Extra) (*Server, error) {
	if addr == "" {
		return nil, errors.New("no metrics address")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler(scrapeTimeout))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n")) // a client gone away is its problem
	})
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, r *http.Request) {
		// The process answers: the one liveness check, as /healthz.
		rep := readyReport{Ready: true, Checks: []checkResult{{Name: "ping", OK: true}}}
		rep.write(w, r, "livez")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		rep := runChecks(ctx, x)
		if x.Warnings != nil {
			rep.Warnings = x.Warnings()
		}
		rep.write(w, r, "readyz")
	})
	for path, doc := range x.JSON {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
			b, err := json.MarshalIndent(doc(), "", "  ")
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(append(b, '\n')) // see /healthz
		})
	}
	s := &Server{
		http: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			MaxHeaderBytes:    maxHeaderBytes,
		},
		addr: l.Addr().String(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		// Metrics are an aid: if serving them breaks, the storage
		// endpoints go on, and the failure is logged.
		if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "Serving metrics stopped", "address", s.addr)
		}
	}()
	return s, nil
}

// runChecks runs the readiness checks in order: ping, endpoints (Ready),
// then x.Checks.
func runChecks(ctx context.Context, x Extra) readyReport {
	checks := []ReadyCheck{{Name: "ping", Check: func(context.Context) error { return nil }}}
	if x.Ready != nil {
		checks = append(checks, ReadyCheck{Name: "endpoints", Check: x.Ready})
	}
	checks = append(checks, x.Checks...)
	rep := readyReport{Ready: true}
	for _, c := range checks {
		res := checkResult{Name: c.Name, OK: true, Degraded: c.DegradedOnly}
		if err := c.Check(ctx); err != nil {
			res.OK, res.Reason = false, err.Error()
			if !c.DegradedOnly && rep.Reason == "" {
				rep.Ready, rep.Reason = false, err.Error()
			}
			if c.DegradedOnly {
				rep.Degraded = append(rep.Degraded, c.Name)
			}
		}
		rep.Checks = append(rep.Checks, res)
	}
	return rep
}

// readyReport is the answer of GET /readyz (and /livez): as text, "ok" or
// "not ready: <reason>" then a "warning: <warning>" line per warning; with
// ?verbose, kube-apiserver's list ("[+]ping ok", "[-]name failed:
// reason", "readyz check passed") with the warnings after it; as JSON
// (when the request accepts application/json), this struct. The status is
// 200 when ready and 503 when not, whatever the warnings and the
// degraded-only checks.
type readyReport struct {
	Ready    bool          `json:"ready"`
	Reason   string        `json:"reason,omitempty"`
	Degraded []string      `json:"degraded,omitempty"`
	Checks   []checkResult `json:"checks"`
	Warnings []string      `json:"warnings,omitempty"`
}

// write sends the report to r's client; name is "readyz" or "livez".
func (rep readyReport) write(w http.ResponseWriter, r *http.Request, name string) {
	code := http.StatusOK
	if !rep.Ready {
		code = http.StatusServiceUnavailable
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		b, err := json.Marshal(rep)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write(append(b, '\n')) // a client gone away is its problem
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	var b strings.Builder
	switch {
	case r.URL.Query().Has("verbose"):
		for _, c := range rep.Checks {
			switch {
			case c.OK:
				fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
			case c.Degraded:
				fmt.Fprintf(&b, "[-]%s failed (degraded, still ready): %s\n", c.Name, c.Reason)
			default:
				fmt.Fprintf(&b, "[-]%s failed: %s\n", c.Name, c.Reason)
			}
		}
		if rep.Ready {
			fmt.Fprintf(&b, "%s check passed\n", name)
		} else {
			fmt.Fprintf(&b, "%s check failed\n", name)
		}
	case rep.Ready && len(rep.Degraded) > 0:
		fmt.Fprintf(&b, "ok (degraded: %s)\n", strings.Join(rep.Degraded, ", "))
	case rep.Ready:
		b.WriteString("ok\n")
	default:
		fmt.Fprintf(&b, "not ready: %s\n", rep.Reason)
	}
	for _, warning := range rep.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warning)
	}
	_, _ = w.Write([]byte(b.String())) // see above
}

// Addr returns the address the server listens on, with the port it was
// given when asked for port 0.
func (s *Server) Addr() string { return s.addr }

// Shutdown stops listening and waits for scrapes in progress to finish,
// until ctx ends; then it closes the remaining connections and returns
// ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if err != nil {
		_ = s.http.Close() // cutting off what the deadline left; err says so
	}
	<-s.done
	return err
}
