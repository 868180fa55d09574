// Package winsvc runs csi-node-proxy as a Windows service and installs or
// removes that service.
//
// Everything that decides something is platform-neutral and builds and is
// tested on every OS:
//
//   - Install and Uninstall: the sequence of service control manager (SCM)
//     operations, through the small Manager and Service interfaces (the
//     part of golang.org/x/sys/windows/svc/mgr this package uses), so a
//     recording fake (package winsvctest) can stand in for the SCM;
//   - CommandLine: the service's command line, quoted by Windows' rules so
//     the SCM starts the program with exactly the arguments given;
//   - Handler: the service's state machine, which turns Stop and Shutdown
//     into a graceful drain and reports StartPending, Running, StopPending
//     (with wait hints) and the exit code, seen through mirror types of
//     golang.org/x/sys/windows/svc's ChangeRequest and Status.
//
// On Windows, Connect returns the real SCM and Run hosts a Handler with
// svc.Run; elsewhere both return ErrNotWindows.
package winsvc
