// The module checks: the go directive the root module states, and that a
// driver can go get the tagged set offline. A module of its own so that
// golang.org/x/mod stays out of the root module's requirements.
module github.com/csi-node-proxy/csi-node-proxy/test/modules

go 1.26.0

require golang.org/x/mod v0.42.0
