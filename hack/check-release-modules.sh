#!/usr/bin/env bash
# check-release-modules.sh vX.Y.Z: check, offline and without touching the
# repository, that the main module and the client module can be released
# as vX.Y.Z and client/vX.Y.Z (see "Releasing" in client/README.md):
#
#   1. a temp copy of HEAD (git archive: committed files only) has both
#      go.mod files rewritten to require the other's tag, with no replace;
#   2. both modules are packed as the go command's module zips into a
#      local file:// GOPROXY, exactly as a tag would serve them;
#   3. `go mod tidy` and `go build ./...` pass in both rewritten modules,
#      resolving each other through that proxy only;
#   4. a consumer module outside the repository (a driver) runs
#      `go get .../client@vX.Y.Z`, `go mod tidy` and `go build`, and ends
#      up with both modules at vX.Y.Z.
#
# Every other module comes from the download cache of the usual module
# cache (GOPROXY has no network fallback; GOFLAGS=-mod=mod; a throwaway
# GOMODCACHE, so the trial versions never reach the usual cache; GOSUMDB
# off): run `go mod download` in both modules first if the cache is cold. What this cannot check offline: that the tags exist and
# point at this commit, and that proxy.golang.org and sum.golang.org serve
# them; the last step of the procedure checks those after pushing.
set -euo pipefail

version=${1:-}
if [[ ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "usage: $0 vX.Y.Z" >&2
	exit 2
fi
root=$(git rev-parse --show-toplevel)
cd "$root"
main_mod=$(go list -m)
client_mod=$main_mod/client
go=${GO:-go}

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
src=$tmp/src proxy=$tmp/proxy consumer=$tmp/consumer
mkdir -p "$src" "$proxy" "$consumer"
git archive HEAD | tar -x -C "$src"

step() { printf '== %s\n' "$*"; }

step "rewrite go.mod: $main_mod requires $client_mod@$version and back, no replace"
(cd "$src" && $go mod edit -dropreplace="$client_mod" -require="$client_mod@$version")
(cd "$src/client" && $go mod edit -dropreplace="$main_mod" -require="$main_mod@$version")
for d in "$src" "$src/client"; do
	if [[ -n $(cd "$d" && $go mod edit -json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Replace") or "")') ]]; then
		echo "FAIL: $d/go.mod still has a replace directive" >&2
		exit 1
	fi
done

# pack MODULE VERSION DIR: write DIR as MODULE@VERSION into the proxy, in
# the layout of a GOPROXY (module zip without nested modules).
pack() {
	local mod=$1 ver=$2 dir=$3
	local out=$proxy/$mod/@v
	mkdir -p "$out"
	cp "$dir/go.mod" "$out/$ver.mod"
	printf '{"Version":"%s","Time":"%s"}\n' "$ver" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$out/$ver.info"
	printf '%s\n' "$ver" >"$out/list"
	rm -f "$out/$ver.zip"
	python3 - "$dir" "$mod@$ver" "$out/$ver.zip" <<'EOF'
import os, sys, zipfile
top, prefix, dest = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for d, dirs, files in os.walk(top):
        # A directory with its own go.mod is another module; .git and
        # vendor are never part of a module zip.
        dirs[:] = sorted(x for x in dirs if x not in (".git", "vendor") and not os.path.exists(os.path.join(d, x, "go.mod")))
        for f in sorted(files):
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            z.write(p, prefix + "/" + os.path.relpath(p, top).replace(os.sep, "/"))
EOF
}

# The two modules come from the local proxy; every other module from the
# download cache of the usual module cache, read as a second file://
# proxy. A separate module cache keeps these trial versions out of the
# usual one (a driver built later must never find them there), and the
# checksum database is off: these zips are not the published ones.
cache_proxy=$($go env GOMODCACHE)/cache/download
export GOPROXY="file://$proxy,file://$cache_proxy" GOMODCACHE="$tmp/modcache" GOSUMDB=off \
	GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" GOPRIVATE= GONOPROXY= GONOSUMDB= GOWORK=off
pack_both() {
	pack "$main_mod" "$version" "$src"
	pack "$client_mod" "$version" "$src/client"
}
pack_both

step "go mod tidy, go build: $main_mod at the tagged $client_mod"
(cd "$src" && $go mod tidy && $go build ./...)
step "go mod tidy, go build: $client_mod at the tagged $main_mod"
(cd "$src/client" && $go mod tidy && $go build ./... && GOOS=windows $go build ./...)
pack_both # with the tidied go.mod and go.sum, as they would be tagged

step "a driver outside the repository: go get $client_mod@$version, go mod tidy, go build"
cat >"$consumer/go.mod" <<EOF
module example.com/driver

go $(cd "$src/client" && $go mod edit -json | python3 -c 'import json,sys; print(json.load(sys.stdin)["Go"])')
EOF
cat >"$consumer/main.go" <<EOF
package main

import (
	"context"
	"errors"
	"fmt"

	"$client_mod"
	"$main_mod/errdefs"
	"$main_mod/groups/volume"
)

func main() {
	c, err := client.Dial(context.Background(), client.Options{})
	if err != nil {
		fmt.Println(err, errors.Is(err, errdefs.ErrUnavailable))
		return
	}
	defer c.Close()
	_, err = c.Volume().ListVolumesOnDisk(context.Background(), &volume.ListVolumesOnDiskRequest{DiskNumber: 1})
	fmt.Println(err)
}
EOF
(
	cd "$consumer"
	$go get "$client_mod@$version"
	$go mod tidy
	$go build ./...
	GOOS=windows $go build ./...
	got=$($go list -m -f '{{.Path}} {{.Version}}' "$main_mod" "$client_mod")
	want="$main_mod $version
$client_mod $version"
	if [[ $got != "$want" ]]; then
		printf 'FAIL: the driver resolved\n%s\nwant\n%s\n' "$got" "$want" >&2
		exit 1
	fi
	if grep -q replace go.mod; then
		echo "FAIL: the driver's go.mod needs a replace" >&2
		exit 1
	fi
)
step "ok: $main_mod $version and $client_mod $version (tag client/$version) resolve each other with no replace"
echo "   (offline only: the tags themselves, proxy.golang.org and sum.golang.org are checked after pushing)"
