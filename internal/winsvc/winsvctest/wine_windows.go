//go:build windows

package winsvctest

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
)

// SCMTestEnv is the environment variable that lets tests create, start
// and delete services on a real Windows machine (as administrator).
const SCMTestEnv = "CSI_NODE_PROXY_TEST_SCM"

// UnderWine reports whether the process runs under Wine (its registry has
// Software\Wine).
func UnderWine() bool {
	k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Wine`, registry.QUERY_VALUE)
	if err != nil {
		return false
	}
	_ = k.Close() // only looked
	return true
}

// NeedSCM skips a test that changes the machine's services unless it runs
// under Wine (a throwaway prefix) or SCMTestEnv is set.
func NeedSCM(t *testing.T) {
	t.Helper()
	if !UnderWine() && os.Getenv(SCMTestEnv) == "" {
		t.Skipf("creates, starts and deletes Windows services: runs under Wine, or on Windows as administrator with %s=1", SCMTestEnv)
	}
}

// WineTolerant wraps the real SCM for tests under Wine, whose services.exe
// does not implement recovery actions (SERVICE_CONFIG_FAILURE_ACTIONS is a
// stub and SERVICE_CONFIG_FAILURE_ACTIONS_FLAG fails with
// ERROR_INVALID_LEVEL): that error is logged and ignored there. On
// Windows, m is returned unchanged.
func WineTolerant(t *testing.T, m winsvc.Manager) winsvc.Manager {
	if !UnderWine() {
		return m
	}
	return wineManager{Manager: m, t: t}
}

type wineManager struct {
	winsvc.Manager
	t *testing.T
}

// OpenService implements winsvc.Manager.
func (m wineManager) OpenService(name string) (winsvc.Service, error) {
	s, err := m.Manager.OpenService(name)
	if err != nil {
		return nil, err
	}
	return wineService{Service: s, t: m.t}, nil
}

// CreateService implements winsvc.Manager.
func (m wineManager) CreateService(name string, c winsvc.Config) (winsvc.Service, error) {
	s, err := m.Manager.CreateService(name, c)
	if err != nil {
		return nil, err
	}
	return wineService{Service: s, t: m.t}, nil
}

type wineService struct {
	winsvc.Service
	t *testing.T
}

// SetRecoveryActions implements winsvc.Service.
func (s wineService) SetRecoveryActions(a []winsvc.RecoveryAction, reset time.Duration) error {
	err := s.Service.SetRecoveryActions(a, reset)
	if errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		s.t.Logf("Wine: SetRecoveryActions: %v (not implemented by Wine; ignored)", err)
		return nil
	}
	return err
}

// SetRecoveryActionsOnNonCrashFailures implements winsvc.Service.
func (s wineService) SetRecoveryActionsOnNonCrashFailures(on bool) error {
	err := s.Service.SetRecoveryActionsOnNonCrashFailures(on)
	if errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		s.t.Logf("Wine: SetRecoveryActionsOnNonCrashFailures: %v (not implemented by Wine; ignored)", err)
		return nil
	}
	return err
}
