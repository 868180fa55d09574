// Command csi-node-proxy is the node storage proxy daemon: a drop-in
// successor of kubernetes-csi/csi-proxy. It serves the csi-proxy API
// groups (disk, volume, filesystem, smb, iscsi, system) to CSI node
// plugins, one endpoint per group-version: a named pipe
// \\.\pipe\csi-proxy-<group>-<version> on Windows, a Unix socket
// <socket-dir>/csi-proxy-<group>-<version>.sock elsewhere.
//
// It accepts upstream's flags (-kubelet-path, -working-dir,
// -windows-service, -require-privacy, -metrics-bind-address and klog's)
// with their meanings and defaults, so an existing service definition keeps
// working, and adds its own (--host, --socket-*, --pipe-sddl, --apis,
// --allowed-service, --sim-*, -version, and the security flags --policy,
// --policy-reload-interval, --audit-log, --audit-reads, --audit-sync,
// --cri-endpoint, --node-name, --pipe-group, --smb-*; see
// docs/security.md). Run with -help for the list; docs/configuration.md
// is generated from the same definitions.
//
// Two subcommands manage the Windows service that -windows-service runs
// as: "csi-node-proxy install-service [options] [--] <daemon flags>" and
// "csi-node-proxy uninstall-service [options]" (service.go,
// docs/operations.md).
//
// This file only turns the command line into a Config and hands it to run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// Exit codes: 2 for a command line that cannot be used, 1 for a failure
// to start or to serve.
const (
	exitUsage   = 2
	exitFailure = 1
)

func main() { os.Exit(realMain(os.Args[1:])) }

func realMain(args []string) int {
	if cmd, ok := subcommand(args); ok { // install-service, uninstall-service (service.go)
		return cmd(args[1:], realServiceEnv())
	}
	cfg, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(os.Stderr)
		return 0
	}
	if errors.Is(err, errVersion) {
		fmt.Println(version.String())
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "csi-node-proxy: %v\nRun csi-node-proxy -help for the flags.\n", err)
		return exitUsage
	}
	defer klog.Flush()
	if err := run(cfg); err != nil {
		// Always on stderr, where whoever started the daemon looks
		// first; also in the log file when logs go to one.
		if !cfg.logsToStderr {
			klog.ErrorS(err, "csi-node-proxy failed")
			klog.Flush()
		}
		fmt.Fprintf(os.Stderr, "csi-node-proxy: %v\n", err)
		return exitFailure
	}
	return 0
}
