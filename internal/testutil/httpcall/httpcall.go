// Package httpcall makes the HTTP requests tests send to the daemon's
// metrics and operations endpoints (/metrics, /healthz, /readyz, /version,
// /deprecated) and returns the status and body, failing the test if the
// request cannot be made or its body read: the metrics package's own tests
// and the daemon's tests check the same endpoints the same way.
package httpcall

import (
	"io"
	"net/http"
	"testing"
)

// Do sends a request with method to url, without a body, through
// http.DefaultClient, and returns the response's status code and body.
func Do(tb testing.TB, method, url string) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read in full below; a close error changes nothing
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Get is Do with GET.
func Get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	return Do(tb, http.MethodGet, url)
}
