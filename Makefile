# csi-node-proxy: `make help` lists the targets.
# Recipe lines run with bash, timed (hack/timed-shell.sh): found beside this
# Makefile, wherever make is run from (make -f, make -C).
SHELL := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))hack/timed-shell.sh
GO ?= go
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT ?= $(shell $(GO) env GOPATH)/bin/golangci-lint
BIN := bin

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

.PHONY: demo
demo: ## As root: the daemon on the Linux backend stages, publishes and unstages a throwaway loop disk through its sockets; without root, make demo-simulated.
	hack/demo-linux.sh

.PHONY: demo-simulated
demo-simulated: ## The same flow on the simulated Windows host (no root, no disk needed).
	hack/demo.sh

.PHONY: run
run: build ## Run the daemon on the simulated host in the foreground (sockets in /tmp/csi-node-proxy).
	$(BIN)/csi-node-proxy --host=simulated --socket-dir=/tmp/csi-node-proxy -v=2

.PHONY: build
build: ## Build the daemon and tools for this machine into bin/.
	$(GO) build -C cmd -o $(abspath $(BIN))/ ./...

# The platforms make cross compiles. make unit tells
# cmd/internal/platformcheck to type-check only the other release platforms
# (linux/arm64): compiling is the stronger check, and type-checking these
# again cost 16 CPU seconds.
CROSS_PLATFORMS := linux/amd64 windows/amd64

.PHONY: cross
cross: ## Build everything for linux/amd64 and windows/amd64 (the root module and the cmd module).
	GOOS=linux GOARCH=amd64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	GOOS=linux GOARCH=amd64 $(GO) build -C cmd ./...
	GOOS=windows GOARCH=amd64 $(GO) build -C cmd ./...

.PHONY: generate
generate: ## Regenerate protobuf stubs, the versioned adapters, the v2compat forwarders, the method facts (gate, audit, host metrics), the call gate's guards, library mode's Node accessors and the Win32 syscall stubs.
	hack/generate-protos.sh
	$(GO) run -C cmd ./convgen -dir ..
	hack/generate-winsyscall.sh

.PHONY: check-generated
check-generated: generate ## Fail if regenerating changes any file.
	@if [ -n "$$(git status --porcelain -- api internal/adapter client inprocess internal/host/windows internal/callgate internal/audit internal/metrics/hostmetrics v2compat)" ]; then \
		echo "generated files are stale; run 'make generate' and commit:"; \
		git status --porcelain -- api internal/adapter client inprocess internal/host/windows internal/callgate internal/audit internal/metrics/hostmetrics v2compat; git diff --stat -- api internal/adapter client inprocess internal/host/windows internal/callgate internal/audit internal/metrics/hostmetrics v2compat; exit 1; \
	fi

.PHONY: vet
vet: ## go vet for linux and windows.
	GOOS=linux GOARCH=amd64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...
	cd cmd && GOOS=linux GOARCH=amd64 $(GO) vet ./...
	cd cmd && GOOS=windows GOARCH=amd64 $(GO) vet ./...
	cd hack/image && $(GO) vet ./...

$(GOLANGCI_LINT):
	$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

# The root module, the cmd module and examples/csi-driver are linted in one
# golangci-lint run per GOOS, in a workspace of the three (LINT_WORK, written
# here, never committed: every other build stays in module mode). Run module
# by module, golangci-lint analysed the root module's packages and every
# dependency once more for each of the other two (its cache is per module:
# the cmd module's lint cost as much after the root module's as before), and
# the modules' own runs compiled the root module's packages again through
# their replace lines (issue 26: 40 CPU seconds less in all). Both modules
# already require the root module through a replace, so the workspace selects
# the same version of every package any of the three builds, for linux and
# for windows (checked with go list -deps -test in each module and in the
# workspace, 3 December 2026). A finding in any of the three is reported
# under its path from the root (examples/csi-driver/...).
LINT_WORK := $(abspath .cache/lint)/go.work

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint for linux and windows.
	mkdir -p $(dir $(LINT_WORK)) && rm -f $(LINT_WORK) && cd $(dir $(LINT_WORK)) && GOWORK=off $(GO) work init $(CURDIR) $(CURDIR)/cmd $(CURDIR)/examples/csi-driver
	GOWORK=$(LINT_WORK) GOOS=linux GOARCH=amd64 $(GOLANGCI_LINT) run ./... ./cmd/... ./examples/csi-driver/...
	GOWORK=$(LINT_WORK) GOOS=windows GOARCH=amd64 $(GOLANGCI_LINT) run ./... ./cmd/...
	@# The test and tool modules: their code is read as often as the rest.
	for m in test/wirecompat test/drivers/upstreamwire test/admission test/manifests test/modules hack/image v2compat test/v2compat; do \
		(cd $$m && GOOS=linux GOARCH=amd64 $(GOLANGCI_LINT) run ./...) || exit 1; \
	done

.PHONY: fmt-check
fmt-check: ## Fail if any Go file is not gofmt'ed.
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi

.PHONY: unit
# test/linuxe2e runs its daemon in a mount namespace of its own; a namespace
# made while another package's test has a volume mounted holds a copy of
# that mount and can make its unmount busy, so that suite runs on its own.
# The load and fault suite (test/soak) runs on its own too: its load
# figures mean something only without other packages' tests beside it.
# So does the hostile-input suite (test/hostile: as root, otherwise it
# skips): its daemon's Linux backend sees every disk of the machine and
# re-reads the partitions of the other packages' loop disks, which makes
# their BLKPG and unmount calls fail with EBUSY now and then. The first
# run includes every fuzz target's seed corpus (testdata/fuzz), which go
# test runs as ordinary test cases. The cmd module's generators and
# shared flags (cmd/convgen, cmd/internal/...) start no goroutine: the race detector
# has nothing to watch there, and their tests run in the configuration of
# every other build without it (NORACE_TARGETS), instead of compiling
# golang.org/x/tools once more with the race detector.
# -vet=off: go test's own vet pass (a subset of go vet's analyzers, run
# on each package before its tests) repeats what make vet has checked for
# both modules, for linux and windows, with go vet's full set.
UNIT_FLAGS := -count=1 -vet=off
unit: ## Run the root and cmd modules' tests with the race detector (the cmd module's generators, which start no goroutine, without it), with the hostile-input suite and the fuzz seed corpora.
	$(GO) test -race $(UNIT_FLAGS) $$($(GO) list ./... | grep -v -e '/test/linuxe2e$$' -e '/test/hostile$$' -e '/test/soak$$' -e '/test/hostileload$$')
	$(GO) test -C cmd -race $(UNIT_FLAGS) ./csi-node-proxy/ ./csi-node-proxyctl/
	CGO_ENABLED=0 GOFLAGS="$(NORACE_GOFLAGS)" CSI_NODE_PROXY_COMPILED_PLATFORMS="$(CROSS_PLATFORMS)" $(GO) test -C cmd $(UNIT_FLAGS) ./convgen/ ./internal/...
	$(GO) test -race $(UNIT_FLAGS) ./test/linuxe2e/
	$(GO) test -race $(UNIT_FLAGS) ./test/hostile/
	$(GO) test -race $(UNIT_FLAGS) ./test/soak/

.PHONY: soak
soak: ## The load and fault suite, long form (test/soak; SOAK_DURATION, SOAK_CLIENTS, SOAK_CHURN); make unit runs a bounded form.
	SOAK_DURATION=$${SOAK_DURATION:-5m} SOAK_CLIENTS=$${SOAK_CLIENTS:-64} SOAK_CHURN=$${SOAK_CHURN:-2000} $(GO) test -race -count=1 -timeout=60m -v ./test/soak/

.PHONY: linuxe2e
linuxe2e: ## As root: the daemon on real loop disks, end to end (test/linuxe2e; also part of unit).
	$(GO) test -race -count=1 ./test/linuxe2e/

.PHONY: client
client: ## Run the client's and the mounter's tests alone, against the daemon's server code too (part of the root module, so unit runs them too).
	$(GO) test -race -count=1 ./client/...

.PHONY: wirecompat
wirecompat: ## Run upstream csi-proxy's client stubs against the daemon (separate module).
	cd test/wirecompat && $(GO) test -count=1 ./...

# Packages whose tests say something about Windows when run as Windows
# binaries under Wine: the named-pipe transport carrying gRPC, the daemon's
# start and stop, path and volume-ID handling, the group rules, and the
# Windows backends' platform-neutral logic (their tests of real Windows
# storage skip under Wine with a message: Wine fakes those APIs), and the
# Windows service, installed into Wine's service control manager, run,
# stopped while a call is in flight and uninstalled.
WINE_PACKAGES := ./hostpath/ ./errdefs/ ./internal/leaf/keylock/ ./internal/transport/ ./internal/server/ \
	./groups/... ./host/simulated/ ./internal/host/windows/... ./internal/identity/... ./internal/policy/ ./internal/audit/ \
	./internal/winsvc/... ./client/ ./internal/leaf/printable/ ./internal/leaf/fieldname/ ./internal/hostset/ ./inprocess/ \
	./examples/driver/nodeops/

# The same for the cmd module (the daemon's start and stop, the Windows service).
WINE_CMD_PACKAGES := ./csi-node-proxy/

# The Go build overlay the Wine run needs (hack/wine/overlay.sh: one
# standard-library file, patched for an answer only Wine gives). make test
# builds every Windows package with it (see TEST_GOFLAGS), so that the
# cross builds, lint, the Wine tests and the image tests compile the
# Windows tree once between them; builds for Linux do not read it.
WINE_OVERLAY_DIR := $(CURDIR)/.cache/wine-overlay
WINE_OVERLAY := $(WINE_OVERLAY_DIR)/overlay.json

.PHONY: wine-overlay
wine-overlay:
	hack/wine/overlay.sh $(WINE_OVERLAY_DIR)

.PHONY: test-windows
test-windows: wine-overlay ## Run the Windows build of the tests under Wine (installs Wine if missing).
	WINE_GO_OVERLAY=$(WINE_OVERLAY) timeout 1200 hack/wine/wine-go-test.sh -count=1 -timeout 300s $(WINE_PACKAGES)
	cd cmd && WINE_GO_OVERLAY=$(WINE_OVERLAY) timeout 600 ../hack/wine/wine-go-test.sh -count=1 -timeout 300s $(WINE_CMD_PACKAGES)

.PHONY: layout-oracle
layout-oracle: ## Compare every Win32 figure the Windows code defines by hand (struct layouts, offsets, IOCTL codes, flags, error codes, GUIDs, //sys parameter lists) with x86_64-w64-mingw32-gcc's for the SDK declarations, cross-checked by running the C program under Wine (cmd/internal/winlayout; needs gcc-mingw-w64-x86-64 and wine).
	CSI_NODE_PROXY_LAYOUT_ORACLE=wine $(GO) test -C cmd -count=1 -timeout 20m -run '^TestLayoutOracle$$' -v ./internal/winlayout/

# The separate modules' test targets below vet only what make lint does not:
# golangci-lint's govet runs go vet's analyzers on every module for linux
# (the lint loop), so a linux go vet here ran them a second time, facts of
# every dependency included (issue 26).
.PHONY: drivers
drivers: ## Replay five real drivers' Windows node flows through upstream's own client stubs against the daemon (separate module; library mode runs in unit).
	@# Vetted for windows too: the drivers it replays build for Windows, and
	@# its go.sum lacked go-winio (imported by client on windows) until a
	@# windows vet failed on it.
	cd test/drivers/upstreamwire && GOOS=windows GOARCH=amd64 $(GO) vet ./... && $(GO) test -count=1 ./...

.PHONY: v2compat
v2compat: ## Upstream csi-proxy v2's library by one replace line: the v2compat module (its forwarders complete, built for linux and windows) and test/v2compat, which builds aws-ebs's and vSphere's v2 mounters with upstream's import paths for Windows through the replace line and runs their node flows on the simulated host (separate modules).
	cd v2compat && GOOS=windows GOARCH=amd64 $(GO) vet ./... && $(GO) test -count=1 ./...
	cd test/v2compat && $(GO) test -count=1 ./...

.PHONY: csi-sanity
csi-sanity: ## csi-sanity against the example CSI driver (separate module): as root through the daemon and in library mode on loop disks, and on the simulated host.
	cd examples/csi-driver && $(GO) test -count=1 -p 1 ./...

.PHONY: admission
admission: ## Evaluate the admission policy's CEL against realistic pods (separate module).
	cd test/admission && $(GO) test -count=1 ./...

.PHONY: manifests
manifests: ## Validate every manifest under deploy/ and examples/, every kustomize overlay and the Helm chart's renderings, offline against Kubernetes' schemas (separate module).
	cd test/manifests && $(GO) test -count=1 ./...

.PHONY: image
image: ## Build the release binaries and, without a container engine, the reproducible OCI images into dist/images/ (docs/images.md); PLATFORMS=linux/amd64 builds one platform, PUSH=REGISTRY/NAME pushes them as NAME:$(cat VERSION).
	RELEASE_TARGETS="$(or $(PLATFORMS),$(RELEASE_TARGETS))" PUSH="$(PUSH)" hack/release.sh

.PHONY: image-test
image-test: ## Test the image builder (separate module): image configs, layer contents, reproducible digests, the Linux Dockerfile.
	cd hack/image && $(GO) test -count=1 ./...

.PHONY: release
release: ## Build release binaries for linux/amd64, linux/arm64, windows/amd64 into dist/, with SHA256SUMS and the image layouts in dist/images/.
	hack/release.sh

.PHONY: release-check
release-check: ## Build the release binary for this machine only and check its -version line and checksum.
	hack/release.sh --check

.PHONY: modules
modules: ## The module checks (separate module): the root module's go directive is the highest of its dependencies', it requires no module only the tools need (golang.org/x/tools, x/mod), and a fresh driver module go gets the root module packed from this tree into a file-system proxy, offline, and builds it without the cmd module.
	cd test/modules && $(GO) test -count=1 ./...

.PHONY: release-modules-check
release-modules-check: modules ## The offline release rehearsal: the same as make modules (docs/releasing.md).

# The go directive of the root module, and the go command at exactly that
# version (the module proxy serves it as the toolchain module).
MIN_GO = $(shell awk '$$1 == "go" { print $$2; exit }' go.mod)

.PHONY: min-go-build
min-go-build: ## Build the root module for linux and windows with the Go its go directive states (downloads that toolchain; not part of test: a cold build takes minutes).
	GOTOOLCHAIN=go$(MIN_GO) GOOS=linux GOARCH=amd64 $(GO) build ./...
	GOTOOLCHAIN=go$(MIN_GO) GOOS=windows GOARCH=amd64 $(GO) build ./...

.PHONY: docs
docs: ## Regenerate docs/configuration.md (the daemon's flags) and docs/cli.md (the CLI's help texts).
	$(GO) test -C cmd ./csi-node-proxy/ -run '^TestConfigurationDoc$$' -count=1 -args -update-docs
	$(GO) test -C cmd ./csi-node-proxyctl/ -run '^TestCLIDoc$$' -count=1 -args -update-docs

.PHONY: check-docs
check-docs: ## Fail if docs/configuration.md or docs/cli.md is stale (run make docs).
	$(GO) test -C cmd ./csi-node-proxy/ -run '^TestConfigurationDoc$$' -count=1
	$(GO) test -C cmd ./csi-node-proxyctl/ -run '^TestCLIDoc$$' -count=1

# The hardening suites (docs/security.md, "Hostile inputs and fuzzing"): the
# hostile-input suite (test/hostile, as root, against the daemon on the
# Linux backend, part of make unit) and the validators' fuzz targets
# (package:Function; seed corpora in each package's testdata/fuzz, partly
# written from the hostile table). make fuzz runs each target for FUZZTIME
# (100,000 inputs, about 4 s each on two cores; 15 targets: about 2
# minutes once the instrumented test binaries are built); their seed
# corpora alone run in make unit. make test runs it for TEST_FUZZTIME
# (25,000 inputs, about 1 s each: a smoke run that finds shallow
# violations; issue 26: the 100,000 cost a cold CI 140 CPU seconds more,
# a tenth of the way to 15 minutes). A target may take a share of the
# amount (package:Function:/N, FUZZTIME divided by N): the policy parser
# runs about 1,500 inputs a second, after replaying its corpus of 527 YAML
# files. The amounts are counts, not durations: with a duration, go1.26's
# fuzzing coordinator now and then fails a target with "context deadline
# exceeded" when the time is up although nothing failed (golang/go#75804,
# fixed in go1.27); a count never sets that deadline. (A duration is still
# taken, for every target alike.)
FUZZ_TARGETS := ./hostpath:FuzzPOSIXClean ./hostpath:FuzzWindowsClean ./hostpath:FuzzPolicyCheck ./hostpath:FuzzReservedDeviceName \
	./internal/leaf/printable:FuzzCheck \
	./groups/smb:FuzzParseRemotePath ./groups/smb:FuzzNewSmbGlobalMapping ./groups/iscsi:FuzzParsePortal \
	./groups/iscsi:FuzzCheckIQN ./groups/iscsi:FuzzConnectTarget ./groups/system:FuzzCheckServiceName \
	./groups/volume:FuzzVolumeID ./internal/adapter/diskid:FuzzParse ./internal/policy:FuzzParse:/7 \
	./internal/host/windows/wmi:FuzzLiteral
FUZZTIME ?= 100000x
TEST_FUZZTIME := 25000x
# Minimizing every new input for up to 60 s (go's default) stalls targets whose
# every mutation finds new coverage (the YAML parser): 100 runs is enough.

.PHONY: fuzz
fuzz: ## Fuzz every validator for FUZZTIME inputs each (15 targets, about 2 minutes; make test runs TEST_FUZZTIME); a failing input is kept in its testdata/fuzz.
	@failed=""; for t in $(FUZZ_TARGETS); do \
		IFS=: read -r pkg fn share <<< "$$t"; time=$(FUZZTIME); \
		case "$$share,$$time" in /*,*[0-9]x) time=$$(( $${time%x} / $${share#/} ))x;; esac; echo "== $$fn ($$pkg, $$time)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $$time -fuzzminimizetime 100x $$pkg || failed="$$failed $$t"; \
	done; if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi

.PHONY: hostile
hostile: ## As root: 8,500 hostile calls against the daemon on the Linux backend, host snapshot before/after (also part of unit).
	$(GO) test -race -count=1 ./test/hostile/

# The hostile-load suite (test/hostileload, as root; skipped otherwise): the
# daemon in a 512 MiB memory cgroup serving a driver while another user
# floods it (docs/security.md, "Resource bounds"). Without the race
# detector, and built as the release is (CGO_ENABLED=0, -trimpath: see
# NORACE_TARGETS): its memory and latency figures are the shipped
# build's. -v prints them. About 40 s with the daemon's build cached, on two cores.
.PHONY: hostile-load
hostile-load: ## As root: a driver's stage/publish flow next to a flooding caller, the daemon in a 512 MiB cgroup; prints memory, latency and audit figures.
	$(GO) test -count=1 -v -timeout=5m ./test/hostileload/

# One build configuration for every build without the race detector: static
# (CGO_ENABLED=0) and -trimpath, as the release binaries are built
# (hack/release.sh). Then make generate, cross, vet and lint (golangci-lint
# type-checks against the export data go list -export compiles, and is
# built itself with it), the separate modules' tests, make layout-oracle,
# the hostile load (whose daemon is then the release build, as its
# figures claim) and the image builder's tests (which build the release
# binaries for linux/amd64 and windows/amd64 again) compile each package
# once per platform and share it through go's build cache. With the
# default configuration (cgo on for linux, no -trimpath) beside it, a cold
# make test compiled most packages twice or three times: lint compiled the
# separate modules' dependencies (Kubernetes, Helm, CEL) and every
# windows package once more than their tests and make cross did. The race
# detector needs cgo, so make unit keeps the default (the daemon binaries
# its tests start without the race detector are built as the release is:
# internal/testutil/daemonbin); so does fuzz, whose instrumented builds
# share nothing anyway. test-windows's Wine overlay changes only the
# Windows builds, which make test gives it all (WINE_OVERLAY).
NORACE_TARGETS := generate check-generated cross vet lint $(GOLANGCI_LINT) check-docs wirecompat drivers v2compat csi-sanity admission manifests image-test modules layout-oracle hostile-load test-windows
NORACE_GOFLAGS := -trimpath $(GOFLAGS)
$(NORACE_TARGETS): export CGO_ENABLED := 0
$(NORACE_TARGETS): export GOFLAGS := $(NORACE_GOFLAGS)

# check-docs is not among test's steps: make unit runs TestConfigurationDoc
# and TestCLIDoc with the rest of the cmd module's tests, failing the same
# way on a stale page, and a separate run cost a cold CI half a minute of
# compiling the daemon's tests once more (issue 26). Nor is make vet:
# golangci-lint's govet runs go vet's analyzers (the same 35, less
# loopclosure, which reports nothing in a module whose go line is 1.22 or
# later) on the same packages for linux and windows, and the two passes
# cost a cold CI a minute. make vet stays, for a quick check.
#
# make test runs in three phases (issue 26: on two cores a serial run left
# a third of the CPU idle while tests waited on disks, daemons and Wine):
#  1. formatting and generation drift, alone (make generate rewrites files
#     that every build reads);
#  2. two lanes side by side, each serial: TEST_HOST_LANE, the suites that
#     use the machine's loop disks, mounts, smbd and tgtd as root (only one
#     of them may run at a time, see make unit), and TEST_BUILD_LANE, the
#     builds, lint, Wine and the separate modules whose tests touch no
#     host state (make modules, which touches none either, ends the host
#     lane: in a cold run the build lane ran alone for its last 44 s);
#     each lane's output is printed whole when it ends;
#  3. the hostile load, alone: its latency figures are compared with
#     docs/security.md's, taken on an otherwise idle machine (so .ci/run's
#     idle-priority builds, which fill the idle CPU of phases 1 and 2, are
#     stopped first: CI_PRIMING_PGID).
TEST_HOST_LANE := unit fuzz csi-sanity drivers wirecompat v2compat modules
TEST_BUILD_LANE := cross lint test-windows layout-oracle admission manifests image-test

# make test builds without debug information (DWARF): nothing reads it in a
# test run, a panic's stack trace comes from the binary's line table, and
# leaving it out made the race build of make unit's packages 10% faster
# with an empty cache. Every build make test runs, including .ci/run's
# golangci-lint build, which reads this line, shares the setting, so the
# builds without the race detector still share one configuration
# (NORACE_TARGETS). make test adds the Wine overlay (WINE_OVERLAY) to it,
# for the Windows builds: with the cross builds, lint and the image tests
# compiling Windows packages without it, the Wine run compiled the
# standard library and the tree for Windows once more (in one cold run
# 168 s of CPU for its builds, against 74 s with the overlay shared).
TEST_GOFLAGS := -gcflags=all=-dwarf=false -ldflags=-w

# The lanes' sub-makes run serially: the lane is the unit of parallelism.
# Their MAKEFLAGS lose -j, the jobserver and output syncing, so that they
# neither join the jobserver nor warn about leaving it, and keep the rest:
# make's other flags (-k, -s) and the variables given on make test's
# command line (make test FUZZTIME=1000x).
SERIAL_MAKE = MAKEFLAGS='$(filter-out -j% --jobserver-auth=% --jobserver-fds=% -O%,$(MAKEFLAGS))' $(MAKE) --no-print-directory

.PHONY: test test-host-lane test-build-lane
test: export GOFLAGS := $(strip $(TEST_GOFLAGS) -overlay=$(WINE_OVERLAY) $(GOFLAGS))
test: export FUZZTIME = $(TEST_FUZZTIME)
test: ## Everything CI runs: formatting, generation drift, cross-builds, lint (go vet's analyzers among it), all tests, the hostile load, fuzzing, the Windows layout oracle.
	hack/wine/overlay.sh $(WINE_OVERLAY_DIR)
	$(SERIAL_MAKE) fmt-check check-generated
	$(MAKE) --no-print-directory -j2 --output-sync=recurse test-host-lane test-build-lane
	@# .ci/run's idle-priority builds (CI_PRIMING_PGID, its process group)
	@# stop here: the hostile load's latency figures want a quiet machine.
	@if [ -n "$$CI_PRIMING_PGID" ]; then \
		kill -TERM -- "-$$CI_PRIMING_PGID" 2>/dev/null || true; \
		for i in $$(seq 50); do pgrep -g "$$CI_PRIMING_PGID" -r D,R,S >/dev/null || break; sleep 0.1; done; \
	fi
	$(SERIAL_MAKE) hostile-load

test-host-lane:
	$(SERIAL_MAKE) $(TEST_HOST_LANE)

test-build-lane:
	$(SERIAL_MAKE) $(TEST_BUILD_LANE)

.PHONY: bench
bench: ## Run the benchmarks and record them in docs/benchmarks.md.
	hack/bench.sh

.PHONY: library-size
library-size: ## Build the smallest library-mode driver (hack/librarysize) for linux and windows and print its sizes (docs/driver-guide.md).
	hack/library-size.sh
