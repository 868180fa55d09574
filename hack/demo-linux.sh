#!/usr/bin/env bash
# The README's first command (make demo): build the daemon, start it on the
# Linux backend (--host=linux) with a throwaway working directory, and run
# the stage/publish/unstage flow (examples/stage-flow) through its sockets
# on a throwaway loop disk: a sparse file in a temp dir, attached as a loop
# device. Everything is undone at the end, also when a step fails: the
# daemon is stopped, mounts unmounted, the loop device detached, the temp
# dir removed.
#
# Needs root (loop devices, partitions, mounts) and e2fsprogs (or xfsprogs
# with DEMO_FS=xfs). Without root it says so and runs the same flow on the
# simulated Windows host instead (hack/demo.sh, make demo-simulated), which
# needs neither: a newcomer's first command shows the proxy working either
# way.
set -euo pipefail
cd "$(dirname "$0")/.."
fs="${DEMO_FS:-ext4}"
size="${DEMO_DISK_SIZE:-512M}" # mkfs.xfs needs at least 300 MiB

die() { echo "make demo: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
  echo "make demo: not root, so no loop disk: the Linux backend needs root to attach, partition,
  format and mount one (sudo make demo). Running the same flow on the simulated Windows host
  instead (make demo-simulated), which needs neither root nor a disk." >&2
  echo >&2
  exec hack/demo.sh
fi
case "$fs" in
  ext4) fs_tool=mkfs.ext4 fs_pkg=e2fsprogs ;;
  xfs) fs_tool=mkfs.xfs fs_pkg=xfsprogs ;;
  *) die "DEMO_FS=$fs: want ext4 or xfs" ;;
esac
missing=()
command -v go >/dev/null 2>&1 || missing+=("go (Go 1.26 from https://go.dev/dl)")
for tool in "$fs_tool:$fs_pkg" losetup:mount blockdev:util-linux lsblk:util-linux truncate:coreutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool%%:*} (Debian package ${tool#*:})")
done
if [ ${#missing[@]} -gt 0 ]; then
  die "missing tools: ${missing[*]}.
  Install them, e.g.: apt-get install -y --no-install-recommends e2fsprogs xfsprogs mount util-linux"
fi
[ -e /dev/loop-control ] || die "no /dev/loop-control: this kernel has no loop device support (CONFIG_BLK_DEV_LOOP)"

work="$(mktemp -d /tmp/csi-node-proxy-demo-linux.XXXXXX)"
kubelet="$work/kubelet"
pid=""
loop=""

# our_mounts prints the mount points below $work or of the loop disk's
# partitions, deepest first.
our_mounts() {
  awk -v w="$work/" -v l="${loop:-/nonexistent}p" \
    'index($5, w) == 1 || index($0, " - ") && index($(NF-1), l) == 1 { print length($5), $5 }' /proc/self/mountinfo |
    sort -rn | cut -d' ' -f2-
}

# partitions_of prints the partition numbers the kernel has for loop
# device $1 (from sysfs: this kernel has no partition-table scanning, so
# they are only those added with BLKPG).
partitions_of() {
  local n="${1#/dev/}" p
  for p in /sys/block/"$n"/"$n"p*; do
    [ -e "$p/partition" ] && cat "$p/partition"
  done
  return 0
}

# remove_partitions deletes every partition of loop device $1
# (BLKPG_DEL_PARTITION, via delpart) and says so if any is left.
remove_partitions() {
  local nr
  for nr in $(partitions_of "$1"); do
    delpart "$1" "$nr" 2>/dev/null || partx -d --nr "$nr" "$1" 2>/dev/null || true
  done
  if [ -n "$(partitions_of "$1")" ]; then
    echo "make demo: partitions of $1 are still there: $(partitions_of "$1" | tr '\n' ' ')" >&2
    return 1
  fi
}

cleanup() {
  local rc=$?
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
  for mp in $(our_mounts); do umount "$mp" || umount -l "$mp" || true; done
  if [ -n "$loop" ]; then
    # SetDiskState(offline) set the kernel's read-only flag; it belongs to
    # /dev/loopN and would outlive the attachment.
    blockdev --setrw "$loop" 2>/dev/null || true
    # Partitions added with BLKPG (PartitionDisk) outlive `losetup -d`:
    # the next user of this /dev/loopN would get EBUSY adding its own.
    # Remove them first (a mounted one cannot be; it was unmounted above).
    remove_partitions "$loop" || true
    losetup -d "$loop" 2>/dev/null || true
  fi
  if [ -n "$(our_mounts)" ]; then
    echo "make demo: still mounted, kept $work:" >&2
    our_mounts >&2
  else
    rm -rf "$work"
  fi
  if [ -n "$loop" ]; then
    if losetup -a | grep -qF "$work/"; then
      echo "make demo: $loop is still attached" >&2
    elif [ -n "$(partitions_of "$loop")" ]; then
      echo "make demo: $loop still has partitions" >&2
    else
      echo "cleaned up: daemon stopped, nothing mounted, $loop's partitions removed and detached, $work removed"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A cold build cache takes minutes on a small machine (about 3.5 on the
# 2-core development VM); say so first rather than sit silent.
echo "make demo: building the daemon and the example driver (go build; the first run on a cold cache takes a few minutes)..."
start=$(date +%s)
go build -C cmd -o "$work/csi-node-proxy" ./csi-node-proxy # the daemon is in the cmd module
go build -o "$work/stage-flow" ./examples/stage-flow
echo "make demo: built in $(($(date +%s) - start)) s"
mkdir -m 0750 "$kubelet"

# A throwaway disk: a sparse file attached as a loop device. -P lets the
# kernel take partitions on it (the proxy adds them with BLKPG).
truncate -s "$size" "$work/disk.img"
loop="$(losetup -f --show -P "$work/disk.img")"
name="${loop#/dev/}"
disk="$(cat "/sys/block/$name/diskseq")"
echo "throwaway disk: $work/disk.img ($size, sparse) attached as $loop; its disk number (diskseq) is $disk"

echo "starting: csi-node-proxy --host=linux --socket-dir=$work/sockets -kubelet-path=$kubelet --linux-filesystem=$fs"
"$work/csi-node-proxy" --host=linux --socket-dir="$work/sockets" -kubelet-path="$kubelet" \
  --linux-filesystem="$fs" -v=2 2>"$work/daemon.log" &
pid=$!
for _ in $(seq 1 100); do
  [ -S "$work/sockets/csi-proxy-filesystem-v1.sock" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/daemon.log"; exit 1; }
  sleep 0.1
done
echo "serving $(find "$work/sockets" -type s | wc -l) sockets in $work/sockets"
echo
"$work/stage-flow" --socket-dir="$work/sockets" --kubelet-path="$kubelet" --disk="$disk"
echo
echo "what the kernel sees now (the flow ended with SetDiskState(offline): the read-only flag):"
lsblk -o NAME,SIZE,RO,TYPE,MOUNTPOINTS "$loop"
echo
kill -TERM "$pid"
wait "$pid"
pid=""
echo "daemon stopped cleanly; sockets left behind: $(find "$work/sockets" -type s | wc -l)"
echo "daemon log (-v=2): $(wc -l <"$work/daemon.log") lines, last 3:"
tail -3 "$work/daemon.log"
