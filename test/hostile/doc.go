// Package hostile is the hostile-input suite of csi-node-proxy: it starts
// the real daemon binary with --host=linux (as root) on a sandbox of
// temporary directories, plants symlinks that lead out of the working
// directories, and sends several thousand malformed, out-of-bounds and
// escaping requests through the generated client stubs of every served API
// version. Every request must be refused with the right gRPC code
// (InvalidArgument for a malformed input, PermissionDenied for one outside
// the sandbox or not allowed, NotFound only for a well-formed input that
// names nothing, FailedPrecondition for the root disk), never with Unknown
// or Internal, and a snapshot of the sandbox, the mount table, the block
// devices' partitions and the loop devices taken before and after the
// whole table must be identical.
//
// The inputs live in one table (inputs_test.go) that also seeds the fuzz
// corpora of the validators (TestFuzzCorpus writes and checks them). See
// docs/security.md, "Hostile inputs and fuzzing".
//
//	go test -race -count=1 ./test/hostile/            # as root; skipped otherwise
//	go test -count=1 -v ./test/hostile/ -run Hostile  # with per-group and per-code counts
//	go test ./test/hostile/ -run FuzzCorpus -hostile.write-corpus   # regenerate the seed corpora
package hostile
