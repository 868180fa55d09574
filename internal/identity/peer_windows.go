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
// handle, and reads its token and job.
func identify(conn net.Conn, _ Options) Caller {
	accepted := time.Now()
	fc, ok := conn.(interface{ Fd() uintptr })
	if !ok {
		return Caller{Incomplete: fmt.Sprintf("a %T is not a named pipe", conn)}
	}
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(windows.Handle(fc.Fd()), &pid); err != nil {
		return Caller{Incomplete: "no client process ID: " + err.Error()}
	}
	// 0 is the idle process and 4 the System process: neither opens
	// pipes, and a remote client shows up with a made-up PID.
	if pid == 0 || pid == 4 {
		return Caller{Incomplete: fmt.Sprintf("implausible client process ID %d", pid)}
	}
	c := Caller{PID: int(pid)}
	proc, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		c.Incomplete = "cannot open the client process: " + err.Error()
		return c
	}
	defer windows.CloseHandle(proc) //nolint:errcheck // our own query handle; nothing to report
	if err := checkSameProcess(proc, pid, accepted); err != nil {
		c.Incomplete = err.Error()
		return c
	}
	var problems []string
	if err := readToken(proc, &c); err != nil {
		problems = append(problems, "token: "+err.Error())
	}
	id, err := containerOf(proc)
	if err != nil {
		problems = append(problems, "container: "+err.Error())
	}
	c.ContainerID = id
	c.Incomplete = strings.Join(problems, "; ")
	return c
}

// checkSameProcess makes sure the opened process is the pipe's client: it
// has the PID asked for, is still running, and was created before the
// connection was accepted. A process created later got a reused PID.
func checkSameProcess(proc windows.Handle, pid uint32, accepted time.Time) error {
	got, err := windows.GetProcessId(proc)
	if err != nil {
		return fmt.Errorf("cannot check the client process ID: %w", err)
	}
	if got != pid {
		return fmt.Errorf("the client process ID changed from %d to %d: %w", pid, got, ErrPIDReused)
	}
	var exit uint32
	if err := windows.GetExitCodeProcess(proc, &exit); err != nil {
		return fmt.Errorf("cannot check the client process: %w", err)
	}
	if exit != stillActive {
		return fmt.Errorf("the client process exited: %w", ErrPIDReused)
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(proc, &created, &exited, &kernel, &user); err != nil {
		return fmt.Errorf("cannot check the client process: %w", err)
	}
	if time.Unix(0, created.Nanoseconds()).After(accepted) {
		return fmt.Errorf("process %d was created after the connection: %w", pid, ErrPIDReused)
	}
	return nil
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
