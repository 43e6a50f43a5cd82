#!/usr/bin/env bash
# Issue 32: a full disk ends a run as documented (docs/reliability.md): exit 3,
# "No space left on device" naming the journal, the journal kept with the
# finished cases and the `--resume` command printed; once there is room,
# --resume finishes the run into a complete set holding every case.
# The disk is a 16 KiB tmpfs, so the test needs root (mount); elsewhere it
# skips (exit 77) saying why, never passes.
# usage: full_disk_test.sh SOURCE_ROOT OPBENCH FAULT_PLUGIN
set -euo pipefail
src=$1 opbench=$2 fault=$3
suite=$src/tests/harness/isolation.toml
work=$(mktemp -d /tmp/opbench-full-disk-XXXXXX)
disk=$work/disk
mkdir "$disk"
trap 'umount "$disk" 2>/dev/null || true; rm -rf "$work"' EXIT
. "$src/tests/harness/e2e_lib.sh" # fail
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=16k tmpfs "$disk" 2>"$work/mount.err"; then
  echo "SKIP: a small filesystem cannot be mounted here (needs root: $(cat "$work/mount.err" 2>/dev/null))"
  exit 77
fi
export OPBENCH_PLUGIN_PATH=$fault
cd "$work"

set +e
"$opbench" run "$suite" --backends naive --no-progress --out disk/set.json > full.out 2> full.err
rc=$?
set -e
[ "$rc" = 3 ] || { cat full.err; fail "full disk: exit $rc, expected 3"; }
grep -qF "disk/set.json.journal: cannot append: No space left on device" full.err \
  || fail "full disk: no message naming the journal: $(cat full.err)"
grep -qF -- "--resume disk/set.json" full.err || fail "full disk: no resume command: $(cat full.err)"
[ -s disk/set.json.journal ] || fail "full disk: the journal is gone"

# Room again: the same journal finishes the run; nothing is lost.
mount -o remount,size=4m "$disk"
"$opbench" run --resume disk/set.json --no-progress > resume.out 2> resume.err \
  || { cat resume.err; fail "--resume after the disk was freed failed"; }
[ ! -e disk/set.json.journal ] || fail "a complete run left its journal"
python3 - disk/set.json <<'PY' || fail "the resumed set is not whole"
import json, sys
rs = json.load(open(sys.argv[1]))
assert rs["context"]["opbench"]["complete"] is True, rs["context"]["opbench"].get("complete")
names = {e["run_name"] for e in rs["benchmarks"] if e.get("backend") == "naive"}
assert len(names) == 3, sorted(names)  # isolation.toml's three shapes on naive
PY
echo "full_disk: all passed"
