// Package deployment checks csi-node-proxy as the shipped Linux
// deployments run it: the systemd unit (deploy/linux/csi-node-proxy.service)
// and the DaemonSet (deploy/linux/csi-node-proxy.yaml). Its test builds the
// daemon, starts it with the command line, capability bounding set and PID
// namespace those files give, with the shipped policy to which one
// driver's preset is added as the policy tells an operator to, and a CRI
// runtime speaking the real protocol. Callers are processes placed in
// cgroups shaped like kubelet's (systemd and cgroupfs drivers) in PID
// namespaces of their own, as pods are. Each pod has its ServiceAccount
// token where kubelet keeps it, in a scratch kubelet directory given to
// the daemon as --kubelet-path, and the runtime reports the token volume's
// mount. It then checks that the driver's container is identified by pod,
// container, ServiceAccount and supplementary groups and admitted, that
// other pods running as the same root user are refused (the driver's
// sidecar, and pods that share its name or ServiceAccount but not both),
// and what the audit log records.
//
// The test needs root and setpriv (util-linux), and a writable cgroup v2
// hierarchy; it skips without them. Everything but this comment builds on
// Linux only.
//
//	sudo go test -count=1 ./test/deployment/ -v
package deployment
