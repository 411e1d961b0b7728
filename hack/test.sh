#!/usr/bin/env bash
# Tephra's test command (the README's and CI's): installs dependencies, builds the control-plane
# tools and Tephra, starts a real control plane on 127.0.0.1, runs the CTest tests against it,
# and stops the control plane even when something fails.
#
#   hack/test.sh                 the default run: unit, lint, the sanitize build with its unit
#                                tests and fuzzing, integration, e2e (chaos), compat (core)
#   hack/test.sh -L unit         only unit tests (extra arguments go to ctest and replace the
#                                default selection)
#   hack/test.sh -L operators    the operator e2e tests, with every operator built
#   hack/test.sh -L browser      the dashboard's browser test, with Debian's chromium
#   TEPHRA_PRESET=asan hack/test.sh
#
# The default run leaves out the long suites that need more than this repository and the
# control-plane tools: the operators (each built from the Go module proxy) and the browser test
# (chromium). `-L operators` builds every operator (cached under ~/.cache/tephra/operators) and
# runs their tests; a selection naming e2e builds the training-operator only, and tests of
# operators not built are skipped. TEPHRA_OPERATORS="kuberay ..." (or "all", or "none")
# overrides the choice.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=test; source "$root/hack/lib.sh"
cd "$root"
preset=${TEPHRA_PRESET:-dev}


step "installing Debian packages"
bash hack/install-deps.sh
# Chromium for the dashboard's browser test: only for selections naming it.
case " $* " in
  *browser*|*dashboard*|*e2e*) browser=1 ;;
  *) browser=0 ;;
esac
if (( browser )); then bash hack/install-deps.sh browser; fi
step "building control-plane tools (cached under ~/.cache/tephra)"
hack/build-tools.sh >/dev/null
# Which operators this run needs: all for -L operators, the training-operator for another
# selection naming operators or e2e, else none.
case " $* " in
  *" -L operators "*) operators=all ;;
  *operators*|*e2e*) operators=training-operator ;;
  *) operators=none ;;
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
# Without arguments, the default run: the test preset's exclusions plus the long suites above.
(( $# > 0 )) || set -- -LE '^(image|compat-full|operators|browser)$'
ctest --preset "$preset" "$@"
