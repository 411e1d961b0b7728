#!/usr/bin/env bash
# Builds real job operators from the Go module proxy, for the operator e2e tests
# (tests/e2e/operators) and for trying Tephra with them by hand. Each operator is a tool module
# in hack/operators/<name>/ (go.mod pins its version) and is cached outside the clone in a
# directory of its own, keyed by that module's go.mod/go.sum and the build recipe, so changing one
# operator rebuilds only that one and the control-plane tools (hack/build-tools.sh) are not
# touched. The directory holds the binary and the operator's CRDs, copied from the module as the
# proxy serves it (its manifests), never fetched from anywhere else.
#
#   hack/build-operators.sh [NAME...]      build the named operators (default: all) if missing
#   hack/build-operators.sh --dir NAME     print NAME's directory only (no build)
#   hack/build-operators.sh --list         print the operator names
#
# NAME is training-operator, kuberay or mpi-operator. Each built directory is printed, one a line:
# <dir>/bin/<binary> and <dir>/crds/*.yaml. Go builds run with nice and -p 2 (shared machines).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=build-operators; source "$root/hack/lib.sh"
modules="$root/hack/operators"
cache="${TEPHRA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tephra}/operators"

# name -> module path, main package, binary name, CRD directory inside the module
declare -A module=(
  [training-operator]=github.com/kubeflow/training-operator
  [kuberay]=github.com/ray-project/kuberay/ray-operator
  [mpi-operator]=github.com/kubeflow/mpi-operator
)
declare -A package=(
  [training-operator]=github.com/kubeflow/training-operator/cmd/training-operator.v1
  [kuberay]=github.com/ray-project/kuberay/ray-operator
  [mpi-operator]=github.com/kubeflow/mpi-operator/cmd/mpi-operator
)
declare -A crd_dir=(
  [training-operator]=manifests/base/crds
  [kuberay]=config/crd/bases
  [mpi-operator]=manifests/base
)
names=(training-operator kuberay mpi-operator)
# Part of every cache key: a change to how operators are built rebuilds them.
readonly RECIPE="go build -trimpath -ldflags=-s-w CGO_ENABLED=0; crds: *.yaml but kustomization"


dir_of() {  # dir_of NAME: the cache directory for NAME's current go.mod/go.sum
  local key
  key=$({ cat "$modules/$1/go.mod" "$modules/$1/go.sum"; echo "$RECIPE"; } | sha256sum | cut -c1-16)
  echo "$cache/$1-$key"
}

known() { [[ -n "${module[$1]:-}" && -f "$modules/$1/go.mod" ]] || die "unknown operator '$1' (known: ${names[*]})"; }

case "${1:-}" in
  --list) printf '%s\n' "${names[@]}"; exit 0 ;;
  --dir) [[ $# -eq 2 ]] || die "--dir takes one operator name"; known "$2"; dir_of "$2"; exit 0 ;;
  -*) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
[[ $# -gt 0 ]] || set -- "${names[@]}"

export CGO_ENABLED=0 GOFLAGS=-modcacherw GOWORK=off
partial=""
trap 'if [[ -n "$partial" ]]; then rm -rf "$partial"; fi' EXIT
build() {  # build NAME: into a private directory, renamed into place only when complete
  local name=$1 out src start
  out=$(dir_of "$name")
  if [[ -x "$out/bin/$name" ]]; then echo "$out"; return 0; fi
  mkdir -p "$cache"
  partial=$(mktemp -d "$out.partial.XXXXXX")
  start=$(date +%s)
  log "building $name (${package[$name]}) in hack/operators/$name"
  (cd "$modules/$name" && nice -n 10 go build -p 2 -trimpath -ldflags "-s -w" \
    -o "$partial/bin/$name" "${package[$name]}") || die "go build of $name failed"
  src=$(cd "$modules/$name" && go list -m -f '{{.Dir}}' "${module[$name]}") ||
    die "the module ${module[$name]} is not in the module cache"
  mkdir -p "$partial/crds"
  local f n=0
  for f in "$src/${crd_dir[$name]}"/*.yaml; do
    [[ "$(basename "$f")" == kustomization.yaml ]] && continue
    grep -q '^kind: CustomResourceDefinition' "$f" || continue
    install -m 0644 "$f" "$partial/crds/"; n=$((n + 1))
  done
  (( n > 0 )) || die "no CRDs in $src/${crd_dir[$name]}"
  chmod 0755 "$partial"
  # Another build of the same key may have finished first: keep the one in place.
  if ! mv -T "$partial" "$out" 2>/dev/null; then
    rm -rf "$partial"
    [[ -x "$out/bin/$name" ]] || die "could not install $out"
  fi
  partial=""
  log "built $name and $n CRDs in $(( $(date +%s) - start ))s into $out"
  echo "$out"
}
for name in "$@"; do known "$name"; build "$name"; done
