#!/usr/bin/env bash
# Run a Go module's GOOS=windows unit tests under Wine on Debian 12 (non-interactive, headless).
# Copied from the project's shared kit and owned here; see docs/windows.md for what Wine can and
# cannot prove.
#
# Usage (from the Go module root):
#   tools/wine/wine-go-test.sh [go test flags and packages...]     (default: ./...)
#   e.g. timeout 900 tools/wine/wine-go-test.sh -count=1 -timeout 120s ./internal/transport/...
#
# Needs: go on PATH; prng.s next to this script; root (for apt-get) unless wine, wine64 and
# binutils-mingw-w64-x86-64 are already installed.
# Environment: WINE_GO_OVERLAY (a go build overlay file made by overlay.sh; default: one made here),
# WINEPREFIX (default: $TMPDIR/wineprefix-go, reused between runs; build files go to
# "$WINEPREFIX.build"), WINEDEBUG (default: -all).
# Exit status: that of `go test`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-as >/dev/null; then
  # apt's lock may be held by another install: wait for it, and retry.
  for i in 1 2 3; do
    apt-get -o DPkg::Lock::Timeout=300 update -qq &&
      apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends wine wine64 binutils-mingw-w64-x86-64 >/dev/null && break
    [ "$i" = 3 ] && { echo "wine-go-test: could not install wine" >&2; exit 1; }
    sleep 10
  done
fi
export WINEPREFIX="${WINEPREFIX:-${TMPDIR:-/tmp}/wineprefix-go}" WINEDEBUG="${WINEDEBUG:--all}" WINEARCH=win64
unset DISPLAY
work="$WINEPREFIX.build"; mkdir -p "$work"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  wineboot -i >/dev/null 2>&1
  wineserver -w
fi
# 1) Go >= 1.22 needs bcryptprimitives.dll!ProcessPrng; Wine 8.0 lacks it -> tiny shim forwarding to RtlGenRandom.
dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$dll" ]; then
  printf 'LIBRARY advapi32.dll\nEXPORTS\nSystemFunction036\n' >"$work/advapi32.def"
  printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n' >"$work/bcp.def"
  x86_64-w64-mingw32-as -o "$work/prng.o" "$here/prng.s"
  x86_64-w64-mingw32-dlltool -d "$work/advapi32.def" -l "$work/libadvapi32.a"
  x86_64-w64-mingw32-ld -shared --entry DllEntry -o "$dll" "$work/prng.o" "$work/bcp.def" "$work/libadvapi32.a"
fi
# 2) Wine 8 returns STATUS_NOT_IMPLEMENTED for FileDispositionInformationEx; Go's os.RemoveAll
#    (t.TempDir cleanup) only falls back on INVALID_INFO_CLASS/INVALID_PARAMETER/NOT_SUPPORTED. Overlay a patched copy
#    (overlay.sh says more). WINE_GO_OVERLAY names one made already: make passes its own, the one
#    its other Windows builds use, so that the tests share their compiled packages.
overlay="${WINE_GO_OVERLAY:-}"
if [ -z "$overlay" ]; then
  "$here/overlay.sh" "$work"
  overlay="$work/overlay.json"
fi
# 3) exec wrapper
cat >"$work/wine-exec" <<'EOS'
#!/bin/sh
exec wine "$@"
EOS
chmod +x "$work/wine-exec"
# 4) keep one wineserver alive for the whole run (saves start-up per test binary); stop it (by PID) at the end.
wineserver -f -p &   # -f: stay in foreground so $! is the server itself
ws=$!
# NB: a plain `kill $ws` orphans services.exe/winedevice.exe/... (they stay alive after the server dies).
# `wineserver -k` kills this WINEPREFIX's server *and* its Wine processes; then reap the background server job.
trap 'wineserver -k 2>/dev/null || true; wait "$ws" 2>/dev/null || true' EXIT
# Start Wine's background processes (services.exe, explorer.exe, winedevice.exe...) now, with stdio on
# /dev/null. Otherwise the first test binary spawns them, they inherit its stdout/stderr pipe, and
# `go test` reports "Test I/O incomplete 1m0s after exiting" (WaitDelay) for that package.
# In one CI run this step failed without a word right after the previous
# run's `wineserver -k` (its processes may outlive the server by a moment):
# say what Wine said, and try again after the old processes are gone.
for attempt in 1 2 3; do
  wine cmd.exe /c exit 0 </dev/null >"$work/start.log" 2>&1 && break
  echo "wine-go-test: Wine did not start (attempt $attempt of 3, exit $?):" >&2
  sed 's/^/  /' "$work/start.log" >&2
  [ "$attempt" = 3 ] && exit 1
  sleep 3
done
[ $# -eq 0 ] && set -- ./...
GOOS=windows GOARCH=amd64 go test -exec "$work/wine-exec" -overlay="$overlay" "$@"
