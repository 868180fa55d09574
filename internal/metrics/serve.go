package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
)

// Server serves GET /metrics (the registry, in the Prometheus exposition
// formats) and GET /healthz (200 "ok" while the process runs) over HTTP on
// TCP. Create it with Serve, end it with Shutdown.
type Server struct {
	http *http.Server
	addr string
	done chan struct{} // closed when Serve has returned
}

// Serve listens on addr, a TCP host:port such as 127.0.0.1:8888 or
// [::1]:8888 (port 0 picks a free port; see Addr), and serves m there in
// the background. An address that cannot be listened on is an error,
// returned at once.
func Serve(addr string, m *Metrics) (*Server, error) {
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
