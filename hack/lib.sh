# Shared by the hack/ scripts. A script sets `hack_prefix` (its name, as messages show it; it may
# change it later, e.g. once it knows its control plane's name) and sources this file:
#   hack_prefix=local-up; source "$root/hack/lib.sh"
# Messages go to stderr so that a script's stdout stays for what callers parse.
hack_t0=$(date +%s)
log() { echo "$hack_prefix: $*" >&2; }
die() { log "error: $*"; exit 1; }
# A stage of a long run, with the seconds since the script started.
step() { echo "==> $hack_prefix: $* (+$(( $(date +%s) - hack_t0 ))s)" >&2; }
