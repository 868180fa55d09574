// Package v2compat is the module that stands in for upstream csi-proxy's
// v2 library (github.com/kubernetes-csi/csi-proxy/v2, KEP-3636) by one
// replace line in a driver's go.mod:
//
//	replace github.com/kubernetes-csi/csi-proxy/v2 => github.com/csi-node-proxy/csi-node-proxy/v2compat vX.Y.Z
//
// Why a module of its own: a replace target must be a module (a go.mod at
// its root) and the Go command loads its packages under the replaced path,
// github.com/kubernetes-csi/csi-proxy/v2/pkg/...; the root module cannot be
// that target, since it would then be loaded twice, under two paths. Its
// module path is ours (a directory or version replacement need not match
// the path it replaces). Its packages import no package of this module,
// only the root module's (package upstreamv2 and below, where everything
// is implemented, and groups): an import of this module's own packages
// would name github.com/csi-node-proxy/csi-node-proxy/v2compat/..., which
// under the replace is a second, different copy of the package. So the
// forwarders here are type aliases and one-line functions, and
// TestForwardsEverything keeps them complete.
//
// A driver that would rather edit its imports than add a replace line
// changes the prefix github.com/kubernetes-csi/csi-proxy/v2 to
// github.com/csi-node-proxy/csi-node-proxy/upstreamv2 and needs no module
// but the root one.
package v2compat
