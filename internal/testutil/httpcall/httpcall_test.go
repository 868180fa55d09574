package httpcall

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDo: the status and body come back as the server sent them, for the
// method asked for.
func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "%s %s\n", r.Method, r.URL.Path)
	}))
	defer srv.Close()
	if code, body := Get(t, srv.URL+"/readyz"); code != http.StatusTeapot || body != "GET /readyz\n" {
		t.Errorf("Get = %d %q", code, body)
	}
	if code, body := Do(t, http.MethodPost, srv.URL+"/metrics"); code != http.StatusTeapot || body != "POST /metrics\n" {
		t.Errorf("Do(POST) = %d %q", code, body)
	}
}
