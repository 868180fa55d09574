// Package v2compat tests the one-line switch of a driver from upstream
// csi-proxy's v2 library to csi-node-proxy: a driver module whose go.mod
// has
//
//	replace github.com/kubernetes-csi/csi-proxy/v2 => <this repository>/v2compat
//
// and whose code is aws-ebs-csi-driver's and vsphere-csi-driver's v2
// mounters as upstream's import paths spell them (test/drivers/v2mounters
// with the import prefix rewritten back to upstream's), built for Windows
// and run on the simulated host through library mode, with a policy and an
// audit log. A module of its own, so that nothing of the repository is
// linked but what the driver module's replace lines bring.
package v2compat
