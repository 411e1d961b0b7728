#!/usr/bin/env bash
# Builds the real control-plane tools (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, kwok, helm) from the Go module proxy into a cache outside the clone,
# keyed by the tool modules' go.mod/go.sum, so only the first build on a machine pays.
#
#   hack/build-tools.sh          build if missing, print the bin directory
#   hack/build-tools.sh --dir    print the bin directory only (no build)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$root/hack/tools"
key=$(cat "$tools"/*/go.mod "$tools"/*/go.sum "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
bin="${TEPHRA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tephra}/bin/$key"

if [[ "${1:-}" == "--dir" ]]; then echo "$bin"; exit 0; fi

readonly KUBE_VERSION=v1.37.2 HELM_VERSION=v3.22.0 KWOK_VERSION=v0.8.0
all=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm)

missing=()
for b in "${all[@]}"; do [[ -x "$bin/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 ]]; then echo "$bin"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS=-modcacherw GOWORK=off
mkdir -p "$bin.partial"
log() { echo "build-tools: $*" >&2; }
# Each build writes into $bin.partial and the directory is renamed only when all succeed, so an
# interrupted build never leaves a half-filled cache entry that looks complete.
build() {  # build <module dir> <output> <ldflags> <package...>
  local dir=$1 out=$2 ld=$3; shift 3
  log "building $* (in hack/tools/$dir)"
  (cd "$tools/$dir" && go build -trimpath -o "$out" -ldflags "-s -w $ld" "$@")
}

date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kube_ld=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=37"
  kube_ld+=" -X $p.gitTreeState=clean -X $p.gitCommit=tephra-tools -X $p.buildDate=$date_utc"
done
helm_ld="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
helm_ld+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  helm_ld+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=37"
done
kwok_ld="-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"

start=$(date +%s)
build etcd "$bin.partial/etcd" "" go.etcd.io/etcd/server/v3
build kwok "$bin.partial/" "$kwok_ld" sigs.k8s.io/kwok/cmd/kwok
build helm "$bin.partial/" "$helm_ld" helm.sh/helm/v3/cmd/helm
build kube "$bin.partial/" "$kube_ld" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
rm -rf "$bin" && mv "$bin.partial" "$bin"
log "built ${all[*]} in $(( $(date +%s) - start ))s into $bin"
echo "$bin"
