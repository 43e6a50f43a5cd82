# Helpers shared by the end-to-end shell tests; sourced once $opbench and
# $work (the test's scratch directory) are set.

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_bad MESSAGE ARGS...: `opbench ARGS` is refused as bad input: exit 2,
# MESSAGE on stderr, and no case measured before the refusal.
expect_bad() {
  local message=$1
  shift
  set +e
  "$opbench" "$@" > "$work/bad.out" 2> "$work/bad.err"
  local rc=$?
  set -e
  [ $rc -eq 2 ] || { cat "$work/bad.out" "$work/bad.err"; fail "'$*' exited $rc, not 2"; }
  grep -qF -- "$message" "$work/bad.err" || { cat "$work/bad.err"; fail "'$*' did not say: $message"; }
  ! grep -q "passed" "$work/bad.out" || fail "'$*' measured before refusing"
}
