#!/usr/bin/env bash
# Builds hack/librarysize, the smallest library-mode driver, for linux and
# windows (amd64), plain and with -trimpath -ldflags='-s -w', and prints
# each binary's size: what library mode costs a driver (docs/driver-guide.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for goos in linux windows; do
	GOOS=$goos GOARCH=amd64 CGO_ENABLED=0 go build -o "$out/plain" ./hack/librarysize
	GOOS=$goos GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/stripped" ./hack/librarysize
	awk -v os="$goos" -v a="$(wc -c <"$out/plain")" -v b="$(wc -c <"$out/stripped")" \
		'BEGIN { printf "%-8s plain %5.1f MB   -trimpath -s -w %5.1f MB\n", os, a / 1e6, b / 1e6 }'
done
