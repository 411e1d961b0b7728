#!/usr/bin/env bash
# Checks that every tracked C++ file is formatted as .clang-format says (clang-format-14, the
# version hack/install-deps.sh installs). Prints the files that differ and how to fix them.
#   hack/check-format.sh         check (exit 1 when a file differs)
#   hack/check-format.sh --fix   reformat them in place
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hack_prefix=check-format; source "$root/hack/lib.sh"
cd "$root"
command -v clang-format-14 >/dev/null || die "clang-format-14 is not installed (hack/install-deps.sh installs it)"
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ "${1:-}" == --fix ]]; then
  clang-format-14 -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format-14 --dry-run --Werror "$f" 2>/dev/null || bad+=("$f")
done
if [[ ${#bad[@]} -gt 0 ]]; then
  log "${#bad[@]} file(s) differ from .clang-format:"
  printf '  %s\n' "${bad[@]}" >&2
  log "fix with: hack/check-format.sh --fix"
  exit 1
fi
log "${#files[@]} files formatted as .clang-format says"
