#!/usr/bin/env bash
# Write the Go build overlay the Windows tests need under Wine into DIR:
# DIR/at_windows.go, the go toolchain's internal/syscall/windows/at_windows.go
# patched, and DIR/overlay.json, which replaces the original with it.
#
# Usage: hack/wine/overlay.sh DIR
#
# Why: Wine 8 answers STATUS_NOT_IMPLEMENTED (0xC0000002) for
# FileDispositionInformationEx, and Go's os.RemoveAll (t.TempDir's cleanup)
# falls back to the older call only on INVALID_INFO_CLASS, INVALID_PARAMETER
# and NOT_SUPPORTED; the patch adds Wine's answer to that list. Windows
# itself never gives that answer to the call, so a build with the overlay
# behaves on Windows as one without.
#
# make test builds every Windows package with this overlay (the Makefile's
# WINE_OVERLAY), not only the Wine tests: an overlay on a standard-library
# package changes the build of everything that imports it, and with the
# cross builds, lint and the image tests compiling without it the Wine run
# compiled the standard library and the tree for Windows once more (issue
# 26). Builds for other systems do not read the file, so they are the same
# with or without it.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
# GOFLAGS may name this very overlay, not written yet.
src="$(GOFLAGS= go env GOROOT)/src/internal/syscall/windows/at_windows.go"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd) # the overlay names files by absolute path
patched="$dir/at_windows.go"
sed 's|^\(\t\tSTATUS_NOT_SUPPORTED\):\( *// the file system doesn.t support FILE_DISPOSITION_INFORMATION_EX.*\)$|\1, NTStatus(0xC0000002):\2 (+ Wine: STATUS_NOT_IMPLEMENTED)|' "$src" >"$patched.tmp"
grep -q 'NTStatus(0xC0000002)' "$patched.tmp" || { rm -f "$patched.tmp"; echo "overlay patch did not apply to $src" >&2; exit 1; }
# Rewritten only when it changed, so that a file another build is reading
# is never replaced under it.
if cmp -s "$patched.tmp" "$patched"; then rm -f "$patched.tmp"; else mv "$patched.tmp" "$patched"; fi
printf '{"Replace":{"%s":"%s"}}\n' "$src" "$patched" >"$dir/overlay.json.tmp"
if cmp -s "$dir/overlay.json.tmp" "$dir/overlay.json"; then rm -f "$dir/overlay.json.tmp"; else mv "$dir/overlay.json.tmp" "$dir/overlay.json"; fi
