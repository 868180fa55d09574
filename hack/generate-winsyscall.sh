#!/usr/bin/env bash
# Regenerates the Win32 syscall stubs (zsyscall_windows.go and friends).
# `go generate` would need GOOS=windows to see the _windows.go files that
# carry the directives, and would then build mkwinsyscall for Windows too;
# so this runs each mkwinsyscall directive itself, natively, in its
# directory. The directive in the source stays the one description.
set -euo pipefail
cd "$(dirname "$0")/.."
# mkwinsyscall tells a standard-library package (which must import
# internal/syscall/windows/sysdll instead of x/sys/windows) by whether its
# directory is below runtime.GOROOT(), which a -trimpath build of
# mkwinsyscall (make's NORACE_TARGETS configuration) only knows from the
# environment: without it every package looked like the standard library.
GOROOT="$(go env GOROOT)"
export GOROOT
directive='//go:generate go run golang.org/x/sys/windows/mkwinsyscall '
git ls-files '*.go' | xargs grep -l "^${directive}" | LC_ALL=C sort | while read -r file; do
  line="$(grep -m1 "^${directive}" "$file")"
  read -r -a argv <<<"${line#//go:generate }"
  (cd "$(dirname "$file")" && "${argv[@]}")
done
