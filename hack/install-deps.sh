#!/usr/bin/env bash
# Installs every Debian package that Tephra's build, tests and benchmarks need. Idempotent: when
# all packages are present it returns without touching apt.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git
  clang-14 libclang-rt-14-dev clang-format-14 clang-tidy-14
  # libraries
  libboost1.81-all-dev rapidjson-dev libgrpc++-dev libprotobuf-dev protobuf-compiler
  protobuf-compiler-grpc libgoogle-glog-dev libgflags-dev catch2 libssl-dev libyaml-cpp-dev
  libbenchmark-dev
  # control plane, tests and benchmarks
  openssl curl jq python3 python3-yaml procps iproute2 gnuplot-nox
)

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
