// Package linuxdaemon runs csi-sanity against the example driver talking
// to the daemon (csi-node-proxy --host=linux, built from this repository)
// over its unix sockets, on real loop disks (Linux, root): see
// linuxdaemon_linux_test.go.
package linuxdaemon
