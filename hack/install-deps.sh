#!/usr/bin/env bash
# Installs the Debian packages Tephra needs. Idempotent: when all packages are present it returns
# without touching apt.
#
#   hack/install-deps.sh              build and dev: everything to build, test and benchmark
#   hack/install-deps.sh build        only what compiling the daemons needs (deploy/Dockerfile)
#   hack/install-deps.sh image        the image tools of hack/build-image.sh and its e2e test
#   hack/install-deps.sh browser      headless Chromium for the dashboard's browser test
set -euo pipefail

declare -A groups=(
  [build]="build-essential cmake ninja-build pkg-config
    libboost1.81-all-dev rapidjson-dev libgrpc++-dev libre2-dev libprotobuf-dev protobuf-compiler
    protobuf-compiler-grpc libgoogle-glog-dev libgflags-dev libssl-dev libyaml-cpp-dev
    libmimalloc-dev"
  # toolchain extras, test and benchmark libraries, control plane, tests and benchmarks
  # libprotoc-dev: the CEL conformance test reads cel-spec's text-format data through protobuf's
  # compiler::Importer at run time (tests/unit/cel/).
  [dev]="ccache mold git clang-14 libclang-rt-14-dev clang-format-14 clang-tidy-14 catch2
    libbenchmark-dev libprotoc-dev openssl curl jq python3 python3-yaml procps iproute2 gnuplot-nox"
  # hack/build-image.sh and the image e2e test: base root filesystems from Debian packages, image
  # builds, unpacking and running the image (runc: crun refuses hosts with hybrid cgroups), and
  # iptables to route the webhook's Service IP.
  [image]="mmdebstrap buildah umoci runc iptables"
  # the dashboard's browser test (tests/e2e/dashboard): headless Chromium
  [browser]="chromium"
)

selected=("$@")
[[ ${#selected[@]} -gt 0 ]] || selected=(build dev)
packages=()
for g in "${selected[@]}"; do
  [[ -n "${groups[$g]:-}" ]] || { echo "install-deps: unknown group '$g' (build, dev, image, browser)" >&2; exit 2; }
  # shellcheck disable=SC2206
  packages+=(${groups[$g]})
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
