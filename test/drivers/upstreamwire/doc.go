// Package upstreamwire runs the driver conformance flows (package
// test/drivers/flows) through upstream csi-proxy v1.3.0's own generated v1
// client stubs, over the wire, against the csi-node-proxy daemon on the
// simulated host: the path a driver binary built against
// github.com/kubernetes-csi/csi-proxy/client takes.
//
// It is a module of its own so that upstream's stubs are never linked
// next to csi-node-proxy's generated protos (same proto full names: a
// binary holding both panics at start-up). From the main module it
// imports only the flows and the model group packages they use. The one
// exception is the command bothclients, a binary of its own that links
// both on purpose: TestProtobufRegistrationConflict shows the panic and
// the documented ways through it.
package upstreamwire
