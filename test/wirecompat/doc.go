// Package wirecompat holds the wire-compatibility tests between
// csi-node-proxy and upstream kubernetes-csi/csi-proxy v1.3.0.
//
// It is a separate module on purpose: it links upstream's generated stubs
// (github.com/kubernetes-csi/csi-proxy/client/api/...), which register the
// same protobuf full names (v1.Disk, v1alpha1.GetBIOSSerialNumberRequest, …)
// as csi-node-proxy's own stubs, so the two can never share a binary. Our
// side is reached only through protoc output (descriptor_test.go) and a
// daemon subprocess (wire*_test.go, older*_test.go). See README.md.
package wirecompat
