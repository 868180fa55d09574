#!/usr/bin/env bash
# make demo-simulated, and make demo without root: build the daemon, start
# it on the simulated Windows host with its sockets in a fresh directory,
# run the stage/publish/unstage flow through those sockets, then stop the
# daemon with SIGTERM and check that it removed its sockets.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d /tmp/csi-node-proxy-demo.XXXXXX)"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A cold build cache takes minutes on a small machine (about 3.5 on the
# 2-core development VM); say so first rather than sit silent.
echo "make demo-simulated: building the daemon and the example driver (go build; the first run on a cold cache takes a few minutes)..."
start=$(date +%s)
go build -C cmd -o "$work/csi-node-proxy" ./csi-node-proxy # the daemon is in the cmd module
go build -o "$work/stage-flow" ./examples/stage-flow
echo "make demo-simulated: built in $(($(date +%s) - start)) s"

echo "starting: csi-node-proxy --host=simulated --socket-dir=$work/sockets"
"$work/csi-node-proxy" --host=simulated --socket-dir="$work/sockets" -v=2 2>"$work/daemon.log" &
pid=$!
for _ in $(seq 1 100); do
  [ -S "$work/sockets/csi-proxy-filesystem-v1.sock" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/daemon.log"; exit 1; }
  sleep 0.1
done
ls "$work/sockets"
echo
"$work/stage-flow" --socket-dir="$work/sockets"
echo
kill -TERM "$pid"
wait "$pid"
pid=""
echo "daemon stopped cleanly; sockets left behind: $(find "$work/sockets" -mindepth 1 | wc -l)"
echo "daemon log (-v=2): $(wc -l <"$work/daemon.log") lines, last 3:"
tail -3 "$work/daemon.log"
