//go:build windows

package identity

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// fakeImageQuery answers like QueryFullProcessImageNameW for a process
// running path: ERROR_INSUFFICIENT_BUFFER while the buffer cannot hold
// the path and its NUL, else the path and its length. It records the
// buffer sizes it was given.
type fakeImageQuery struct {
	path  []uint16
	sizes []uint32
}

func (f *fakeImageQuery) query(buf []uint16, size *uint32) error {
	f.sizes = append(f.sizes, *size)
	if int(*size) < len(f.path)+1 || len(buf) < int(*size) {
		return windows.ERROR_INSUFFICIENT_BUFFER
	}
	copy(buf, f.path)
	buf[len(f.path)] = 0
	*size = uint32(len(f.path))
	return nil
}

// A program below a path longer than MAX_PATH is named in full: the
// buffer grows until the path fits, instead of the call failing or the
// path being cut. (Constructed answers behind the seam: a real process
// with such a path cannot be made under Wine.)
func TestImageNameGrowsToLongPath_Seam(t *testing.T) {
	long := `C:\` + strings.Repeat(`deep\`, 100) + "driver.exe" // 513 characters
	f := &fakeImageQuery{path: windows.StringToUTF16(long)[:len(long)]}
	got, err := imageName(f.query)
	if err != nil || got != long {
		t.Fatalf("imageName = %q, %v; want the %d-character path", got, err, len(long))
	}
	if want := []uint32{windows.MAX_PATH, 2 * windows.MAX_PATH}; fmt.Sprint(f.sizes) != fmt.Sprint(want) {
		t.Errorf("buffer sizes %v, want %v", f.sizes, want)
	}

	short := `C:\csi\driver.exe`
	f = &fakeImageQuery{path: windows.StringToUTF16(short)[:len(short)]}
	if got, err := imageName(f.query); err != nil || got != short || len(f.sizes) != 1 {
		t.Errorf("short path: %q, %v after %d calls", got, err, len(f.sizes))
	}
}

// A query that never fits stops at MAX_LONG_PATH with an error, and any
// other failure, or an answer that does not fit its own buffer, is an
// error at once: no name is made up.
func TestImageNameFailures_Seam(t *testing.T) {
	var sizes []uint32
	_, err := imageName(func(_ []uint16, size *uint32) error {
		sizes = append(sizes, *size)
		return windows.ERROR_INSUFFICIENT_BUFFER
	})
	if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || sizes[len(sizes)-1] != windows.MAX_LONG_PATH || len(sizes) > 8 {
		t.Errorf("never fits: %v after sizes %v", err, sizes)
	}

	calls := 0
	_, err = imageName(func([]uint16, *uint32) error { calls++; return windows.ERROR_ACCESS_DENIED })
	if !errors.Is(err, windows.ERROR_ACCESS_DENIED) || calls != 1 {
		t.Errorf("access denied: %v after %d calls", err, calls)
	}

	for _, bad := range []uint32{0, windows.MAX_PATH, windows.MAX_PATH + 1} {
		got, err := imageName(func(_ []uint16, size *uint32) error { *size = bad; return nil })
		if err == nil || got != "" {
			t.Errorf("reported size %d: %q, %v; want an error", bad, got, err)
		}
	}
}

// FILETIMEs convert to the instant they name, to the 100 ns; a zero
// FILETIME is no time, not 1601. (Constructed values: Wine's clock gives
// no known instant to compare with.)
func TestFiletimeTime_Seam(t *testing.T) {
	want := time.Date(2026, 1, 2, 3, 4, 5, 123456700, time.UTC)
	// 100 ns intervals from 1601-01-01 to 1970-01-01: 11644473600 s.
	ticks := uint64(want.Unix()+11644473600)*10_000_000 + uint64(want.Nanosecond()/100)
	ft := windows.Filetime{LowDateTime: uint32(ticks), HighDateTime: uint32(ticks >> 32)}
	if got := filetimeTime(ft); !got.Equal(want) {
		t.Errorf("filetimeTime(%d) = %v, want %v", ticks, got, want)
	}
	if got := filetimeTime(windows.Filetime{}); !got.IsZero() {
		t.Errorf("zero FILETIME = %v, want the zero time", got)
	}
}

// The real calls on this test process (Wine implements both): its
// program is the test binary and it was created before now, recently.
func TestProcessImageAndCreatedOfSelf_RealCalls(t *testing.T) {
	proc, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = windows.CloseHandle(proc) }() // the test's own handle
	exe, err := processImage(proc)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(filepath.Clean(exe), filepath.Clean(self)) {
		t.Errorf("processImage = %q, os.Executable = %q", exe, self)
	}
	created, err := processCreated(proc)
	if err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); created.After(now) || now.Sub(created) > time.Hour {
		t.Errorf("created %v, now %v", created, now)
	}
}

// A pipe client is identified with its program and start time: here the
// client is this process, dialling its own pipe, so both are known.
// Real calls (go-winio pipe, GetNamedPipeClientProcessId,
// QueryFullProcessImageNameW, GetProcessTimes), under Wine or Windows.
func TestIdentifyPipeClientExecutableAndStart_RealCalls(t *testing.T) {
	path := fmt.Sprintf(`\\.\pipe\csi-node-proxy-identity-test-%d`, os.Getpid())
	l, err := winio.ListenPipe(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// go-winio's first pipe instance never gets a ConnectNamedPipe;
	// Wine (like Windows 7) hands it to the first client, which then
	// hangs (microsoft/go-winio#313). A throwaway client takes it.
	if h, err := windows.CreateFile(windows.StringToUTF16Ptr(path), 0, 0, nil, windows.OPEN_EXISTING,
		windows.SECURITY_SQOS_PRESENT|windows.SECURITY_ANONYMOUS, 0); err == nil {
		_ = windows.CloseHandle(h)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	timeout := 10 * time.Second
	client, err := winio.DialPipe(path, &timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	defer server.Close()

	c := Identify(server, Options{})
	if c.PID != os.Getpid() {
		t.Fatalf("caller %+v, want pid %d", c, os.Getpid())
	}
	self, _ := os.Executable()
	if !strings.EqualFold(filepath.Clean(c.Executable), filepath.Clean(self)) {
		t.Errorf("executable %q, want %q", c.Executable, self)
	}
	if c.StartTime.IsZero() || c.StartTime.After(time.Now()) {
		t.Errorf("start time %v", c.StartTime)
	}
}
