#!/usr/bin/env bash
# make release: cross-build the daemon and the operator CLI for every
# release target into dist/<os>-<arch>/ (csi-node-proxy and
# csi-node-proxyctl, with .exe for Windows), stamped with the version, commit
# and build date that -version (the CLI: version) prints, and write
# dist/SHA256SUMS over every binary and the packaged Helm chart
# (dist/charts/, with its index.yaml). Then the container images, built from
# those binaries without a container engine (hack/image, docs/images.md), as
# OCI image layouts in dist/images/: windows/ (the HostProcess image), linux/
# (the index of the Linux images) and all/ (one index of every image).
#
# Environment (all optional):
#   RELEASE_TARGETS  space-separated os/arch list (default: linux/amd64 linux/arm64 windows/amd64)
#   DIST             output directory (default: dist); it is emptied first
#   VERSION          default: the VERSION file, the release version the
#                      manifests run (a test holds them equal); the images
#                      are tagged with it
#   LINUX_TOOLS      1 (default): the linux/amd64 image gets the tool layer of
#                    the pinned Debian packages (e2fsprogs, xfsprogs,
#                    util-linux, open-iscsi; hack/image/debian/rootfs.sh,
#                    needs apt-get and dpkg-deb; .debs cached in
#                    ~/.cache/csi-node-proxy-image-debian); 0: binaries only
#   PUSH             a repository (REGISTRY/NAME) to push the index of every
#                    image built to, as PUSH:VERSION, with the Docker config's
#                    credentials (docker login, crane auth login); default: none
#   CHART_URL        where dist/charts/ will be served, for index.yaml's urls;
#                    default: none (urls relative to index.yaml)
#   COMMIT           default: git rev-parse HEAD
#   SOURCE_DATE_EPOCH  build date as Unix seconds, also every timestamp in the
#                      images; default: the commit's time, so that two builds
#                      of one commit give the same binaries and image digests
#
# The builds are static (CGO_ENABLED=0), -trimpath (no local paths in the
# binary) and stripped of symbol tables (-s -w; stack traces still work).
#
# hack/release.sh --check (make release-check) builds only this machine's
# os/arch into a temporary directory, then checks that the binaries' version
# lines carry exactly the stamped values and that SHA256SUMS verifies.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
check=false
if [ "${1:-}" = --check ]; then
  check=true
  RELEASE_TARGETS="$("$GO" env GOOS)/$("$GO" env GOARCH)"
  DIST=$(mktemp -d "${TMPDIR:-/tmp}/csi-node-proxy-release.XXXXXX")
  trap 'rm -rf "$DIST"' EXIT
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--check]" >&2
  exit 2
fi
targets_list=${RELEASE_TARGETS:-linux/amd64 linux/arm64 windows/amd64}
read -r -a targets <<<"${targets_list//,/ }"
dist=${DIST:-dist}
version=${VERSION:-$(cat VERSION)}
commit=${COMMIT:-$(git rev-parse HEAD)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
build_date=$(date -u -d "@${SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ)

pkg=github.com/csi-node-proxy/csi-node-proxy/internal/version
ldflags="-s -w -X ${pkg}.Version=${version} -X ${pkg}.Commit=${commit} -X ${pkg}.BuildDate=${build_date}"

rm -rf "$dist"
mkdir -p "$dist"
# The binaries are built in the cmd module (go build -C cmd), where -o is
# taken relative to cmd/: give it absolute paths.
abs_dist=$(cd "$dist" && pwd)
echo "release ${version} (commit ${commit}, built ${build_date}) into ${dist}/"
for target in "${targets[@]}"; do
  os=${target%/*}
  arch=${target#*/}
  for cmd in csi-node-proxy csi-node-proxyctl; do
    exe=$cmd
    [ "$os" = windows ] && exe=$cmd.exe
    out="${dist}/${os}-${arch}/${exe}"
    echo "  ${target} -> ${out}"
    # -buildvcs=false: the version is stamped explicitly, and VCS stamping
    # fails in some CI checkouts (detached worktrees, unsafe ownership).
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
      "$GO" build -C cmd -trimpath -ldflags "$ldflags" -o "${abs_dist}/${os}-${arch}/${exe}" "./${cmd}"
  done
done

# The Helm chart as helm package writes it, and the chart repository's
# index.yaml, into dist/charts/ (hack/helmchart: no helm binary; the chart
# version is the release's without its v, its appVersion the image tag).
echo "  deploy/helm/csi-node-proxy -> ${dist}/charts/"
"$GO" run ./hack/helmchart/helmpackage -chart deploy/helm/csi-node-proxy -out "${abs_dist}/charts" \
  -version "${version#v}" -app-version "$version" -date "$SOURCE_DATE_EPOCH" ${CHART_URL:+-url "$CHART_URL"}

# Paths relative to dist/, so "cd dist && sha256sum -c SHA256SUMS" checks them.
sums=$(cd "$dist" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum)
printf '%s\n' "$sums" >"${dist}/SHA256SUMS"
cat "${dist}/SHA256SUMS"

if ! $check; then
  # hack/image is a module of its own (go-containerregistry stays out of the
  # daemon's module); paths are absolute because go run works in hack/image.
  echo "images into ${dist}/images/"
  root=$(pwd)
  push=()
  [ -n "${PUSH:-}" ] && push=(-push "$PUSH")
  case " ${targets[*]} " in
    *" linux/amd64 "*)
      if [ "${LINUX_TOOLS:-1}" = 1 ]; then
        tools_cache=${XDG_CACHE_HOME:-$HOME/.cache}/csi-node-proxy-image-debian
        echo "Debian tool packages for linux/amd64 into ${tools_cache}/"
        hack/image/debian/rootfs.sh "$tools_cache"
        push+=(-linux-rootfs "$tools_cache/rootfs")
      fi
      ;;
  esac
  (cd hack/image && "$GO" run . -dist "$abs_dist" -out "$abs_dist/images" -license "$root/LICENSE" \
    -platforms "${targets[*]}" -version "$version" -revision "$commit" -source-date-epoch "$SOURCE_DATE_EPOCH" "${push[@]}")
fi

if $check; then
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS)
  bin=$(find "$dist" -type f \( -name csi-node-proxy -o -name csi-node-proxy.exe \) | head -1)
  got=$("$bin" -version)
  want="csi-node-proxy ${version} (commit ${commit}, built ${build_date}, $("$GO" env GOVERSION))"
  if [ "$got" != "$want" ]; then
    printf 'release-check: -version printed\n  %s\nwant\n  %s\n' "$got" "$want" >&2
    exit 1
  fi
  echo "release-check: ok: $got"
  # The CLI's version prints its own version first, then exits 5 because no
  # daemon answers in the empty socket directory; only the first line counts.
  cli=$(find "$dist" -type f \( -name csi-node-proxyctl -o -name csi-node-proxyctl.exe \) | head -1)
  got=$("$cli" --socket-dir "$dist" version 2>/dev/null | head -1 || true)
  want="csi-node-proxyctl ${want#csi-node-proxy }"
  if [ "$got" != "$want" ]; then
    printf 'release-check: csi-node-proxyctl version printed\n  %s\nwant\n  %s\n' "$got" "$want" >&2
    exit 1
  fi
  echo "release-check: ok: $got"
fi
