#!/usr/bin/env bash
# Tephra's test command (the README's and CI's): installs dependencies, builds the control-plane
# tools and Tephra, starts a real control plane on 127.0.0.1, runs every CTest test (unit, lint,
# fuzz and integration) against it, and stops the control plane even when something fails.
#
#   hack/test.sh                 everything
#   hack/test.sh -L unit         only unit tests (extra arguments go to ctest)
#   hack/test.sh -L operators    the operator e2e tests, with every operator built
#   TEPHRA_PRESET=asan hack/test.sh
#
# Debian's chromium is installed for the dashboard's browser test (tests/e2e/dashboard) unless the
# selection leaves it out.
#
# Real job operators (tests/e2e/operators) are built from the Go module proxy and cached like the
# control-plane tools. The default run builds only the training-operator; the tests of operators
# not built are skipped; `-L operators` builds all of them, a selection without operator tests
# (-L unit) none. TEPHRA_OPERATORS="kuberay ..." (or "all", or "none") overrides the choice.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=test; source "$root/hack/lib.sh"
cd "$root"
preset=${TEPHRA_PRESET:-dev}


step "installing Debian packages"
bash hack/install-deps.sh
# Chromium for the dashboard's browser test: for the default run and selections naming it.
case " $* " in
  *browser*|*dashboard*|*e2e*) browser=1 ;;
  *" -L "*|*" -R "*) browser=0 ;;
  *) browser=1 ;;
esac
if (( browser )); then bash hack/install-deps.sh browser; fi
step "building control-plane tools (cached under ~/.cache/tephra)"
hack/build-tools.sh >/dev/null
# Which operators this run needs: all for -L operators, none for a -L or -R selection that
# names neither operators nor e2e (-L unit), else the default's.
case " $* " in
  *" -L operators "*) operators=all ;;
  *operators*|*e2e*) operators=training-operator ;;
  *" -L "*|*" -R "*) operators=none ;;
  *) operators=training-operator ;;
esac
operators=${TEPHRA_OPERATORS:-$operators}
[[ "$operators" == all ]] && operators=$(hack/build-operators.sh --list)
if [[ "$operators" != none ]]; then
  step "building operators: $(echo $operators) (cached under ~/.cache/tephra/operators)"
  # shellcheck disable=SC2086
  hack/build-operators.sh $operators >/dev/null
fi
step "building Tephra (preset $preset)"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"

name="test-$$"
trap 'step "stopping control plane"; hack/control-plane.sh down --name "$name"' EXIT
step "starting control plane $name"
# ConfigMap watches bypass the watch cache so tests can force 410 Gone by compacting etcd.
hack/control-plane.sh up --name "$name" --nodes 4 --uncached-watch configmaps >/dev/null
eval "$(hack/control-plane.sh env --name "$name")"
step "running tests against kube-apiserver $TEPHRA_APISERVER"
kubectl version
ctest --preset "$preset" "$@"
