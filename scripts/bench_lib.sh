# SPDX-License-Identifier: MIT
# Shell helpers shared by the scripts/bench-* programs (sourced after they cd to the repository).

bench="$(basename "$0")"

# bench_run NAME COMMAND...: runs COMMAND bounded by $bound seconds, its stderr kept in
# $dir/stderr, and prints the last line of its output (the JSON of the round). A failure (a
# non-zero exit, the time bound, no output) is told on stderr with the command and the end of its
# stderr, and the status is 1. A function bench_after_run, when the script defines one, runs after
# every command (e.g. to delete the broker's queues between runs).
bench_run() {
  local name="$1" out rc=0
  shift
  out=$(timeout "$bound" "$@" 2>"$dir/stderr") || rc=$?
  if declare -F bench_after_run >/dev/null; then bench_after_run; fi
  if [ "$rc" -ne 0 ] || [ -z "$out" ]; then
    [ "$rc" -eq 124 ] && echo "(timed out after $bound s)" >>"$dir/stderr"
    {
      echo "$bench: $name FAILED (exit $rc): $*"
      sed 's/^/  /' "$dir/stderr" | tail -10
    } >&2
    return 1
  fi
  echo "$out" | tail -1
}
