#!/usr/bin/env bash
# hack/image/debian/rootfs.sh OUT: fetch the Debian packages pinned in
# bookworm-amd64.lock (apt-get download NAME=VERSION, from the Debian
# archive this machine's apt is set up for), check each .deb's SHA-256
# against the lock, and unpack them (dpkg-deb -x, no maintainer scripts)
# into OUT/rootfs, in the lock's order. hack/image -linux-rootfs OUT/rootfs
# then lays that tree out as the Linux amd64 image's tool layer. OUT/debs
# keeps the .debs: a later run fetches only what is missing.
#
# Same lock, same bytes: a version the archive no longer serves (Debian
# keeps only the newest point release) fails the fetch rather than
# silently taking another; update the lock with --lock then.
#
# hack/image/debian/rootfs.sh --lock rewrites bookworm-amd64.lock from
# what apt resolves now for the four packages.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/bookworm-amd64.lock
packages=(e2fsprogs xfsprogs util-linux open-iscsi)

if [ "${1:-}" = --lock ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  : >"$tmp/status"
  apt-get -s -o Dir::State::status="$tmp/status" -o APT::Get::Show-Versions=1 \
    install --no-install-recommends "${packages[@]}" | awk '/^Inst/ {gsub(/[()\[\]]/, "", $3); print $2, $3}' >"$tmp/closure"
  chmod 0777 "$tmp"
  (cd "$tmp" && awk '{print $1"="$2}' closure | xargs apt-get download -q >/dev/null 2>&1)
  {
    sed -n '1,/^# package version sha256$/p' "$lock"
    while read -r name version; do
      deb=$(ls "$tmp/${name}_"*.deb)
      echo "$name $version $(sha256sum "$deb" | cut -d' ' -f1)"
    done <"$tmp/closure"
  } >"$lock.new"
  mv "$lock.new" "$lock"
  echo "rootfs.sh: $(grep -vc '^#' "$lock") packages locked"
  exit 0
fi

[ $# -eq 1 ] || { echo "usage: $0 OUT | --lock" >&2; exit 2; }
out=$1
mkdir -p "$out/debs"
rm -rf "$out/rootfs"
mkdir -p "$out/rootfs"
# apt-get download works as the _apt user where it can write.
chmod 0777 "$out/debs"

# One apt-get call for every .deb missing or not matching the lock.
missing=()
while read -r name version sum; do
  deb=$(ls "$out/debs/${name}_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ] || ! echo "$sum  $deb" | sha256sum --quiet -c - >/dev/null 2>&1; then
    rm -f "$out/debs/${name}_"*.deb
    missing+=("$name=$version")
  fi
done < <(grep -v '^#' "$lock")
if [ ${#missing[@]} -gt 0 ]; then
  if ! (cd "$out/debs" && apt-get download -q "${missing[@]}" >/dev/null 2>&1); then
    echo "rootfs.sh: apt-get download of ${#missing[@]} pinned packages failed (a version no longer served? run $0 --lock)" >&2
    exit 1
  fi
fi
while read -r name version sum; do
  deb=$(ls "$out/debs/${name}_"*.deb | head -1)
  if ! echo "$sum  $deb" | sha256sum --quiet -c -; then
    echo "rootfs.sh: $deb ($name $version) does not match the lock's SHA-256" >&2
    exit 1
  fi
  dpkg-deb -x "$deb" "$out/rootfs"
done < <(grep -v '^#' "$lock")
echo "rootfs.sh: $(grep -vc '^#' "$lock") packages unpacked into $out/rootfs ($(du -sh "$out/rootfs" | cut -f1))"
