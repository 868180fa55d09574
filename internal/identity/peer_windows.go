//go:build windows

package identity

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// identify asks the pipe for its client's process, pins the process with a
// handle, and reads its token and job. The handle is returned for the
// connection to keep (per-call liveness). The PID and time are the ones
// the listener took when the client connected (transport's accepted
// connection), when conn carries them: the PID is reused quickly on
// Windows, so a process created after the connect is not the client.
func identify(conn net.Conn, _ Options, _ acceptMark) (Caller, *process) {
	pid, accepted, ok := connectedPeer(conn)
	if !ok {
		fc, isPipe := unwrap(conn).(interface{ Fd() uintptr })
		if !isPipe {
			return Caller{Incomplete: fmt.Sprintf("a %T is not a named pipe", unwrap(conn))}, nil
		}
		accepted = time.Now()
		if err := windows.GetNamedPipeClientProcessId(windows.Handle(fc.Fd()), &pid); err != nil {
			return Caller{Incomplete: "no client process ID: " + err.Error()}, nil
		}
	}
	// 0 is the idle process and 4 the System process: neither opens
	// pipes, and a remote client shows up with a made-up PID.
	if pid == 0 || pid == 4 {
		return Caller{Incomplete: fmt.Sprintf("implausible client process ID %d", pid)}, nil
	}
	c := Caller{PID: int(pid)}
	proc, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, pid)
	if err != nil {
		c.Incomplete = "cannot open the client process: " + err.Error()
		return c, nil
	}
	created, err := checkSameProcess(proc, pid, accepted)
	if err != nil {
		_ = windows.CloseHandle(proc) // not the client's; nothing to report
		c.Incomplete = err.Error()
		return c, nil
	}
	held := &process{h: osProcess{h: proc}}
	// The program and the start time name the process in audit records,
	// as on Linux. Both come through the handle that pins the process, so
	// they are the client's whatever happens to its PID. No rule selects
	// by the program, so one that cannot be read stays unknown without
	// making the identity incomplete, as on Linux.
	c.StartTime = created
	c.Executable, _ = processImage(proc)
	readAccount(proc, &c)
	return c, held
}

// readAccount fills c's user, groups and container from process proc's
// token and job, and says in c.Incomplete what could not be read: what
// Peer (for a pipe client) and Self (library mode) read alike.
func readAccount(proc windows.Handle, c *Caller) {
	var problems []string
	if err := readToken(proc, c); err != nil {
		problems = append(problems, "token: "+err.Error())
	}
	id, err := containerOf(proc)
	if err != nil {
		problems = append(problems, "container: "+err.Error())
	}
	c.ContainerID = id
	c.Incomplete = strings.Join(problems, "; ")
}

// connectedPeer finds, in conn or a connection it wraps, the client PID
// and connect time the listener recorded when the client connected.
func connectedPeer(conn net.Conn) (pid uint32, at time.Time, ok bool) {
	for range 16 {
		if cp, is := conn.(interface {
			ClientProcessID() (uint32, time.Time, bool)
		}); is {
			return cp.ClientProcessID()
		}
		u, is := conn.(interface{ NetConn() net.Conn })
		if !is || u.NetConn() == nil || u.NetConn() == conn {
			return 0, time.Time{}, false
		}
		conn = u.NetConn()
	}
	return 0, time.Time{}, false
}

// checkSameProcess makes sure the opened process is the pipe's client: it
// has the PID asked for, is still running, and was created before the
// connection was accepted. A process created later got a reused PID. It
// returns the process's creation time.
func checkSameProcess(proc windows.Handle, pid uint32, accepted time.Time) (time.Time, error) {
	got, err := windows.GetProcessId(proc)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot check the client process ID: %w", err)
	}
	if got != pid {
		return time.Time{}, fmt.Errorf("the client process ID changed from %d to %d: %w", pid, got, ErrPIDReused)
	}
	var exit uint32
	if err := windows.GetExitCodeProcess(proc, &exit); err != nil {
		return time.Time{}, fmt.Errorf("cannot check the client process: %w", err)
	}
	if exit != stillActive {
		return time.Time{}, fmt.Errorf("the client process exited: %w", ErrPIDReused)
	}
	created, err := processCreated(proc)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot check the client process: %w", err)
	}
	if created.After(accepted) {
		return time.Time{}, fmt.Errorf("process %d was created after the connection: %w", pid, ErrPIDReused)
	}
	return created, nil
}

// stillActive is STILL_ACTIVE, GetExitCodeProcess's answer for a running
// process.
const stillActive = 259

// readToken fills the account fields from the process token.
func readToken(proc windows.Handle, c *Caller) error {
	var tok windows.Token
	if err := windows.OpenProcessToken(proc, windows.TOKEN_QUERY, &tok); err != nil {
		return err
	}
	defer tok.Close() //nolint:errcheck // our own query handle; nothing to report
	u, err := tok.GetTokenUser()
	if err != nil {
		return err
	}
	c.WindowsSID = u.User.Sid.String()
	if acct, dom, _, err := u.User.Sid.LookupAccount(""); err == nil {
		c.WindowsAccount = acct
		if dom != "" {
			c.WindowsAccount = dom + `\` + acct
		}
	}
	groups, err := tok.GetTokenGroups()
	if err != nil {
		return err
	}
	for _, g := range groups.AllGroups() {
		if g.Attributes&windows.SE_GROUP_ENABLED != 0 && g.Attributes&windows.SE_GROUP_USE_FOR_DENY_ONLY == 0 {
			c.WindowsGroupSIDs = append(c.WindowsGroupSIDs, g.Sid.String())
		}
	}
	return nil
}

// containerOf returns the ID of the container whose job holds proc, or ""
// when proc is in no container job.
func containerOf(proc windows.Handle) (string, error) {
	in, err := isProcessInJob(proc, 0)
	if err != nil {
		return "", err
	}
	if !in {
		return "", nil
	}
	ids, err := containerJobsOf(proc)
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", nil
	case 1:
		return ids[0], nil
	}
	return "", errors.New("the process is in the jobs of several containers: " + strings.Join(ids, ", "))
}

// acceptMark is unused on Windows: the listener records the client's PID
// and the connect time itself (connectedPeer), which bound the client
// more tightly than the handshake could.
type acceptMark struct{}

func markAccepted() acceptMark { return acceptMark{} }
