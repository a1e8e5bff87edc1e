# shellcheck shell=bash
# A command run beside others with its output held back, then waited for and shown in one piece (sourced).
#   in_background NAME command [args...]
#   await_background NAME [message on failure]   # exits with the command's status when it failed
declare -A _background_pid=() _background_log=()

in_background() {
  local name=$1
  shift
  _background_log[$name]="$(mktemp)"
  "$@" >"${_background_log[$name]}" 2>&1 &
  _background_pid[$name]=$!
}

await_background() {
  local name=$1 failure=${2:-} status=0
  wait "${_background_pid[$name]}" || status=$?
  cat "${_background_log[$name]}"
  rm -f "${_background_log[$name]}"
  if [ "$status" -ne 0 ]; then
    [ -z "$failure" ] || echo "$failure" >&2
    exit "$status"
  fi
}
