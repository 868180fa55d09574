// Package e2e is the end-to-end test of csi-node-proxy: it starts the whole
// daemon stack in-process (the simulated Windows host of
// testdata/sim.json, the six group Services built as the daemon builds
// them, internal/server on unix sockets) and calls every method of every
// served group-version through real gRPC connections with the generated
// client stubs, asserting results and status codes on success and failure
// paths.
//
// A client interceptor records the status code of every call. After the
// suite, TestMain fails the run if any call ended in codes.Unknown or
// codes.Internal, if an error message quoted a secret, or (when the whole
// suite ran) if one of the served methods was never called successfully, or
// never failed although it has a failure path (see noFailurePath).
//
//	go test -race -count=1 ./test/e2e/
//	go test -count=1 ./test/e2e/ -v -args -e2e.klog   # with the daemon's log
package e2e
