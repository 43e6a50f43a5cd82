#!/usr/bin/env bash
# The commit a build records is the checkout's, also when the checkout is
# owned by another user (as actions/checkout leaves it in a container, where
# plain git refuses it as "dubious ownership" and the build used to record
# 'unknown'). Clones the source, hands the clone to another user, configures
# it as the build user and generates harness/git_version.hpp. Needs root (to
# chown); skipped (exit 77) otherwise.
# usage: git_commit_test.sh SOURCE_ROOT
set -euo pipefail
src=$1
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to hand a clone to another user"; exit 77; }
work=$(mktemp -d /tmp/opbench-git-commit-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

git clone -q "$src" "$work/clone"
chown -R nobody "$work/clone"
if git -C "$work/clone" rev-parse HEAD > /dev/null 2>&1; then
  echo "note: this git does not refuse another user's checkout; the check still runs"
fi
want=$(git -c safe.directory="$work/clone" -C "$work/clone" rev-parse --short=12 HEAD)
meson setup "$work/build" "$work/clone" -Donednn=disabled -Dcuda=disabled -Dtests=false > "$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; fail "meson setup of the clone failed"; }
ninja -C "$work/build" harness/git_version.hpp > "$work/ninja.log" 2>&1 || { cat "$work/ninja.log"; fail "no git_version.hpp"; }
got=$(sed -n 's/^#define OPBENCH_GIT_COMMIT "\(.*\)"$/\1/p' "$work/build/harness/git_version.hpp")
echo "checkout $want, recorded '$got'"
[ "$got" = "$want" ] || fail "the build records '$got', the checkout is at $want"
echo "ok"
