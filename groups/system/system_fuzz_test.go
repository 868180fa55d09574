package system_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// The seed corpus in testdata/fuzz/ holds the hostile-input suite's service
// names (test/hostile, TestFuzzCorpus writes them); the f.Add seeds are
// good ones.

// serviceHost records which services the Service asks about.
type serviceHost struct{ started, got []string }

func (h *serviceHost) BIOSSerialNumber(context.Context) (string, error) { return "", nil }
func (h *serviceHost) StartService(_ context.Context, name string) error {
	h.started = append(h.started, name)
	return nil
}
func (h *serviceHost) StopService(_ context.Context, name string, _ bool) error {
	h.started = append(h.started, name)
	return nil
}
func (h *serviceHost) GetService(_ context.Context, name string) (system.ServiceInfo, error) {
	h.got = append(h.got, name)
	return system.ServiceInfo{}, nil
}

// FuzzCheckServiceName checks CheckServiceName and the allow-list: a
// refusal is InvalidArgument; an accepted name is 1 to 256 bytes of UTF-8
// (Windows and systemd names are text) without '/', '\' or control
// characters ("control characters are never valid"); StartService and
// StopService reach the host only for a name on the allow-list (compared
// without case) and answer PermissionDenied for any other valid name.
func FuzzCheckServiceName(f *testing.F) {
	for _, s := range []string{"MSiSCSI", "iscsid", "getty@tty1", "W32Time"} {
		f.Add(s)
	}
	allowed := []string{"MSiSCSI", "iscsid"}
	f.Fuzz(func(t *testing.T, name string) {
		err := system.CheckServiceName(name)
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("CheckServiceName(%q) = %v: want InvalidArgument", name, err)
			}
		} else {
			if name == "" || len(name) > 256 || !utf8.ValidString(name) || strings.ContainsAny(name, `/\`) {
				t.Fatalf("CheckServiceName accepted %q", name)
			}
			for _, r := range name {
				if unicode.IsControl(r) {
					t.Fatalf("CheckServiceName accepted %q: control character %U", name, r)
				}
			}
		}
		h := &serviceHost{}
		s := system.NewService(h, allowed)
		_, serr := s.StartService(context.Background(), &system.StartServiceRequest{Name: name})
		_, terr := s.StopService(context.Background(), &system.StopServiceRequest{Name: name, Force: true})
		onList := false
		for _, a := range allowed {
			onList = onList || strings.EqualFold(a, name)
		}
		for _, e := range []error{serr, terr} {
			switch {
			case err != nil && !errors.Is(e, errdefs.ErrInvalidArgument):
				t.Fatalf("service %q: CheckServiceName refuses it, Start/Stop answer %v", name, e)
			case err == nil && onList && e != nil:
				t.Fatalf("service %q is allowed; Start/Stop answer %v", name, e)
			case err == nil && !onList && !errors.Is(e, errdefs.ErrPermissionDenied):
				t.Fatalf("service %q is not allowed; Start/Stop answer %v, want PermissionDenied", name, e)
			}
		}
		if (len(h.started) > 0) != (err == nil && onList) {
			t.Fatalf("service %q (valid %v, allowed %v) reached the host: %q", name, err == nil, onList, h.started)
		}
		_, gerr := s.GetService(context.Background(), &system.GetServiceRequest{Name: name})
		if (gerr == nil) != (err == nil) || (len(h.got) > 0) != (err == nil) {
			t.Fatalf("GetService(%q) = %v, host asked %q; CheckServiceName says %v", name, gerr, h.got, err)
		}
	})
}
