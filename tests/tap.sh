# tap.sh: the TAP helpers the shell tests share (sourced, not run). The test sets
# $tmp, its scratch directory, before sourcing; a failed check's output goes to the
# log as TAP comments.
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && sed 's/^/# /' "$2"; }
check() { # description, then a command that passes by its exit status
  d="$1"; shift
  if "$@" >"$tmp/check.out" 2>&1; then ok "$d"; else not_ok "$d" "$tmp/check.out"; fi
}
