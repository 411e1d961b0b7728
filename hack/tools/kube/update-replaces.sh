#!/usr/bin/env bash
# Regenerates hack/tools/kube/go.mod for a Kubernetes release: k8s.io/kubernetes requires its
# staging modules at the non-existent v0.0.0, so each one is replaced by its published tag.
#   hack/tools/kube/update-replaces.sh v1.37.2
set -euo pipefail
version=${1:?usage: $0 vMAJOR.MINOR.PATCH}
staging=v0.${version#v1.}
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOFLAGS=-modcacherw GOWORK=off
gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
for m in $(grep -E '^\s*k8s.io/[a-z0-9-]+ v0\.0\.0\s*$' "$gomod" | awk '{print $1}' | sort -u); do
  go mod edit -replace="$m=$m@$staging"
done
go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$version" "k8s.io/kubernetes/cmd/kube-controller-manager@$version" \
  "k8s.io/kubernetes/cmd/kube-scheduler@$version" "k8s.io/kubernetes/cmd/kubectl@$version"
go mod tidy
