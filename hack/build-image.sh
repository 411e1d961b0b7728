#!/usr/bin/env bash
# Builds Tephra's container image from deploy/Dockerfile without Docker or a registry: the Debian
# base images are made from Debian's packages (mmdebstrap), buildah builds the Dockerfile on them,
# and the result is an OCI archive with an SPDX SBOM of the image's Debian packages. Needs root.
#
#   hack/build-image.sh [--host-build] [--refresh-base] [--output FILE] [--print-env]
#
#   (default)       the Dockerfile as `docker build` runs it: the daemons are compiled in its
#                   build stage (a release build in a container, 15-25 min on 2 cores)
#   --host-build    the build stage replaced (--build-context build=DIR) by a host build of the
#                   same preset (cmake --preset image, with ccache): the same Debian bookworm
#                   g++ 12 and libraries, so the same binaries, in a fraction of the time
#   --refresh-base  rebuild the base images (to take Debian's latest updates)
#   --output FILE   also copy the OCI archive to FILE
#   --print-env     print only shell assignments for the image e2e test (TEPHRA_IMAGE, ...)
#
# Cached under ${TEPHRA_IMAGE_CACHE:-~/.cache/tephra/image}, keyed by the inputs: base/ (root
# filesystems: recipe, mirror, mmdebstrap version), storage/ (buildah's images and layer cache),
# and tephra-VERSION-KEY.oci.tar and .spdx.json (the image: base, Dockerfile, this script and
# the SBOM's, daemons or sources, version, revision). A run whose inputs are unchanged only
# checks the keys; older images and archives are removed.
# TEPHRA_DEBIAN_MIRROR overrides http://deb.debian.org.
set -euo pipefail
shopt -s inherit_errexit  # errors inside $(...) stop the script too
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=build-image; source "$root/hack/lib.sh"
cd "$root"

host_build=0 refresh_base=0 output="" print_env=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --host-build) host_build=1; shift ;;
    --refresh-base) refresh_base=1; shift ;;
    --output) output=$2; shift 2 ;;
    --print-env) print_env=1; shift ;;
    *) echo "build-image: unknown argument $1 (see the top of $0)" >&2; exit 2 ;;
  esac
done
sha() { sha256sum | cut -c1-64; }
[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap --mode=root, buildah with root storage)"

cache=${TEPHRA_IMAGE_CACHE:-$HOME/.cache/tephra/image}
mkdir -p "$cache/base"
# A storage of our own, so that nothing else on the machine sees or prunes these images.
export CONTAINERS_STORAGE_CONF=$cache/storage.conf
cat >"$CONTAINERS_STORAGE_CONF.new" <<EOF
[storage]
driver = "overlay"
graphroot = "$cache/storage"
runroot = "${XDG_RUNTIME_DIR:-/run}/tephra-image"
EOF
mv "$CONTAINERS_STORAGE_CONF.new" "$CONTAINERS_STORAGE_CONF"
# RUN steps in a chroot: this machine's OCI runtimes cannot start build containers as buildah
# configures them (crun refuses hybrid cgroups, runc its default rlimits), and apt-get and cmake
# need no more isolation than that.
export BUILDAH_ISOLATION=chroot
exec 9>"$cache/lock"
flock 9  # one build at a time per cache

step "installing image tools"
groups=(image)
(( host_build )) && groups+=(build)
bash hack/install-deps.sh "${groups[@]}"

# ---- inputs: version (the chart's appVersion, also the daemons' --version) and revision
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/tephra/Chart.yaml)
project_version=$(sed -n 's/^project(tephra VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n "$version" && "$version" == "$project_version" ]] ||
  die "charts/tephra/Chart.yaml appVersion '$version' differs from the project VERSION '$project_version' in CMakeLists.txt"
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[[ "$revision" != unknown ]] && ! git diff --quiet HEAD -- 2>/dev/null && revision+="-dirty"

# ---- base images: Debian's minbase (debian:bookworm) and its slim form (debian:bookworm-slim,
# documentation, manuals and translations left out, as the official slim images do)
suite=bookworm
mirror=${TEPHRA_DEBIAN_MIRROR:-http://deb.debian.org}
sources=("deb $mirror/debian $suite main" "deb $mirror/debian $suite-updates main"
         "deb $mirror/debian-security $suite-security main")
slim_excludes=('/usr/share/doc/*' '/usr/share/man/*' '/usr/share/info/*' '/usr/share/locale/*'
               '/usr/share/groff/*' '/usr/share/lintian/*' '/usr/share/linda/*')
mmdebstrap_version=$(dpkg-query -W -f='${Version}' mmdebstrap)
# As the official images: apt keeps no downloaded packages or caches in the layers it writes.
apt_clean='DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";'

# base_image TAG [slim]: imports the root filesystem into storage as docker.io/library/debian:TAG
# (the name the Dockerfile's FROM resolves to), building it first unless cached.
base_image() {
  local tag=$1 slim=${2:-} opts=(--variant=minbase --mode=root --format=tar
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr)  # merged /usr without usrmerge and perl
  if [[ -n "$slim" ]]; then
    local p
    for p in "${slim_excludes[@]}"; do opts+=("--dpkgopt=path-exclude=$p"); done
    opts+=("--dpkgopt=path-include=/usr/share/doc/*/copyright")  # licences stay
  fi
  local key; key=$(printf '%s\n' "$tag" "$mmdebstrap_version" "${opts[@]}" "${sources[@]}" | sha)
  local image_key; image_key=$(printf '%s\n' "$key" "$apt_clean" | sha)
  local tar="$cache/base/debian-$tag-${key:0:16}.tar" name="localhost/tephra-base:$tag-${image_key:0:16}"
  if (( refresh_base )) || [[ ! -f "$tar" ]]; then
    step "making debian:$tag from Debian packages (mmdebstrap)"
    mmdebstrap --quiet "${opts[@]}" "$suite" "$tar.new" "${sources[@]}" >&2
    mv "$tar.new" "$tar"
    buildah rmi -f "$name" >/dev/null 2>&1 || true
  fi
  if ! buildah inspect --type image "$name" >/dev/null 2>&1; then
    local c; c=$(buildah from scratch)
    buildah add --quiet "$c" "$tar" / >/dev/null
    # Added here, not by mmdebstrap, whose own last apt runs would read it.
    printf '%s\n' "$apt_clean" >"$cache/base/docker-clean"
    buildah add --quiet "$c" "$cache/base/docker-clean" /etc/apt/apt.conf.d/docker-clean >/dev/null
    # As the official images: bash by default (the Dockerfile's ENTRYPOINT resets it).
    buildah config --cmd '["bash"]' --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --label dev.tephra.base="mmdebstrap $suite minbase${slim:+ slim}, $mirror" "$c"
    buildah commit --quiet --rm "$c" "$name" >/dev/null
  fi
  buildah tag "$name" "docker.io/library/debian:$tag"
  printf '%s\n' "$name" "$tar" >>"$cache/keep"
  buildah inspect --type image --format '{{.FromImageID}}' "$name"
}
rm -f "$cache/keep"
slim_id=$(base_image "$suite-slim" slim)
inputs=("base $slim_id")
if (( ! host_build )); then
  inputs+=("build base $(base_image "$suite")")
fi

# ---- the daemons: a host build, or the build context the Dockerfile compiles
build_args=()
if (( host_build )); then
  step "building the daemons on the host (cmake --preset image)"
  cmake --preset image >/dev/null
  cmake --build --preset image >&2
  context_dir="$cache/host-build"
  rm -rf "$context_dir"; mkdir -p "$context_dir/out"
  for d in scheduler controller-manager admission; do
    strip -o "$context_dir/out/tephra-$d" "build/image/bin/tephra-$d"
  done
  inputs+=("daemons $(cat "$context_dir"/out/* | sha)")
  build_args+=(--build-context "build=$context_dir")
else
  # What `COPY . .` sends: the tracked and untracked files git does not ignore.
  inputs+=("sources $(git ls-files -z --cached --others --exclude-standard |
    xargs -0 sha256sum 2>/dev/null | sha)")
fi
inputs+=("dockerfile $(sha <deploy/Dockerfile)" "recipe $(cat hack/build-image.sh hack/image-sbom.py | sha)"
         "version $version" "revision $revision")
key=$(printf '%s\n' "${inputs[@]}" | sha)
image="localhost/tephra:$version-${key:0:16}"
archive="$cache/tephra-$version-${key:0:16}.oci.tar"
sbom="$cache/tephra-$version-${key:0:16}.spdx.json"

# ---- the image
if buildah inspect --type image "$image" >/dev/null 2>&1 && [[ -f "$archive" && -f "$sbom" ]]; then
  step "cached: $image"
else
  step "building $image from deploy/Dockerfile"
  created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  # The labels also as --label: buildah's layer cache reuses the Dockerfile's LABEL step when
  # only the build arguments changed, which would keep an older revision and date.
  labels=()
  for l in "version=$version" "revision=$revision" "created=$created"; do
    labels+=(--label "org.opencontainers.image.$l")
  done
  buildah bud --layers --pull=never -f deploy/Dockerfile "${build_args[@]}" "${labels[@]}" \
    --build-arg "TEPHRA_VERSION=$version" --build-arg "TEPHRA_REVISION=$revision" \
    --build-arg "TEPHRA_CREATED=$created" -t "$image" . >&2
  step "writing $archive"
  rm -f "$archive"
  buildah push --quiet "$image" "oci-archive:$archive.new:tephra:$version" >&2
  mv "$archive.new" "$archive"
  step "writing the SBOM $sbom"
  c=$(buildah from --pull=never "$image")
  mnt=$(buildah mount "$c")
  python3 hack/image-sbom.py --root "$mnt" --name tephra --version "$version" \
    --revision "$revision" --image-id "$(buildah inspect --type image --format '{{.FromImageID}}' "$image")" \
    >"$sbom.new" || { buildah rm "$c" >/dev/null; die "SBOM generation failed"; }
  buildah rm "$c" >/dev/null
  mv "$sbom.new" "$sbom"
fi
# The chart's default image is tephra:<appVersion>.
buildah tag "$image" "localhost/tephra:$version"
[[ -n "$output" ]] && cp "$archive" "$output"

# Older images, bases and archives: no key reaches them any more.
printf '%s\n' "$image" "$archive" "$sbom" >>"$cache/keep"
buildah images --format '{{.Name}}:{{.Tag}}' | grep -E '^localhost/tephra(-base)?:.*-[0-9a-f]{16}$' |
  grep -vxF -f "$cache/keep" | xargs -r buildah rmi >/dev/null 2>&1 || true
for f in "$cache"/tephra-*.oci.tar "$cache"/tephra-*.spdx.json "$cache"/base/debian-*.tar; do
  if [[ -e "$f" ]] && ! grep -qxF "$f" "$cache/keep"; then rm -f "$f"; fi
done

if (( print_env )); then
  cat <<EOF
export CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF
export TEPHRA_IMAGE=$image
export TEPHRA_IMAGE_VERSION=$version
export TEPHRA_IMAGE_REVISION=$revision
export TEPHRA_IMAGE_ARCHIVE=$archive
export TEPHRA_IMAGE_SBOM=$sbom
EOF
  exit 0
fi
size=$(buildah images --format '{{.Size}}' "$image" | head -n 1)
layers=$(buildah inspect --type image --format '{{len .OCIv1.RootFS.DiffIDs}}' "$image")
step "done"
cat <<EOF
image    $image (also localhost/tephra:$version): $size, $layers layers
archive  $archive ($(du -h "$archive" | cut -f1))
sbom     $sbom ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["packages"]))' "$sbom") packages)
load it: podman load -i $archive   (or: skopeo copy oci-archive:$archive docker://REGISTRY/tephra:$version)
storage: CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF buildah images
EOF
