#!/usr/bin/env bash
# The CI benchmark gate, runnable anywhere (.github/workflows/bench.yml runs
# it too):
#   1. run a suite, repetitions interleaved     -> OUT (a result set)
#   2. compare OUT with the newest archived set of the same machine, suite and
#      build type; a case slower beyond the threshold fails the gate; the
#      comparison goes to the summary as Markdown (and to the console)
#   3. archive OUT when the gate passed (so a regression never becomes the
#      next baseline; --archive-always archives anyway)
#
# usage: scripts/ci-bench.sh [options] [-- opbench run options...]
#   --opbench PATH      the opbench program (default build/harness/opbench)
#   --suite FILE        the suite (default suites/quick.toml)
#   --archive DIR       the archive of earlier sets (default results/archive)
#   --out FILE          the new result set (default results/ci-<UTC time>.json)
#   --set FILE          gate this existing result set instead of running the
#                       suite (a set made elsewhere, e.g. by a sharded run)
#   --summary FILE      append the Markdown comparison here too
#                       ($GITHUB_STEP_SUMMARY is used when set)
#   --compare-args "A"  extra options for opbench compare (e.g. "--threshold 10%")
#   --no-archive        never archive
#   --archive-always    archive even when the gate fails
#   --keep N            after archiving, keep the newest N sets of this machine,
#                       suite and build type (default 100; 0: never prune)
#   --changes-gate N    also fail when a change point to slower begins among
#                       the newest N archived runs of the suite on this machine
#                       (`opbench history --changes --fail-on-change-in N`, after
#                       archiving), naming the commit range: a step or drift
#                       that each one-run comparison let through. A change is
#                       seen once 3 runs follow it, so N of 5-10 suits a gate
#                       run on every commit. Fewer than 6 archived runs: a note.
#   --ab BASE_REF       paired instead: build BASE_REF's plugins (a git worktree
#                       with its own build dir) and run the suite with each
#                       changed backend's two builds side by side (`opbench ab`);
#                       the gate is the paired verdict. With no plugin source
#                       changed since BASE_REF (a harness-only change) the
#                       gate falls back to the archive comparison above.
#                       docs/ci.md says when to use which.
#   --ab-args "A"       extra options for opbench ab (e.g. "--pairs 200 --threshold 0.03")
#   --ab-backends "B.." compare these backends instead of the changed ones
# Exit: 0 gate passed (or no baseline yet), 1 a case slower beyond the
# threshold, a change point to slower among the newest runs (--changes-gate)
# or a case failed verification, 2 bad input, 3 environment.
set -euo pipefail

opbench=build/harness/opbench
suite=suites/quick.toml
archive=results/archive
out=""
given_set=""
summary=""
compare_args=""
archive_mode=on-pass
keep=100
run_args=()
ab_ref=""
ab_args=""
ab_backends=""
changes_gate=0

while [ $# -gt 0 ]; do
  case "$1" in
    --opbench) opbench=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --archive) archive=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --set) given_set=$2; shift 2 ;;
    --summary) summary=$2; shift 2 ;;
    --compare-args) compare_args=$2; shift 2 ;;
    --changes-gate) changes_gate=$2; shift 2 ;;
    --no-archive) archive_mode=never; shift ;;
    --archive-always) archive_mode=always; shift ;;
    --keep) keep=$2; shift 2 ;;
    --ab) ab_ref=$2; shift 2 ;;
    --ab-args) ab_args=$2; shift 2 ;;
    --ab-backends) ab_backends=$2; shift 2 ;;
    --) shift; run_args=("$@"); break ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "ci-bench: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

case "$keep" in ''|*[!0-9]*) echo "ci-bench: --keep $keep: give a whole number of sets (0: never prune)" >&2; exit 2 ;; esac
[ -x "$opbench" ] || { echo "ci-bench: no opbench program at $opbench (build first, or pass --opbench)" >&2; exit 3; }

# --- paired: the base commit's plugins against the head's, in one run ---
# Prints the backends whose plugin changed between BASE_REF and the work tree
# (all built ones when the SDK under plugins/ changed), one a line.
changed_backends() {
  local changed
  changed=$(git diff --name-only "$ab_ref" -- ":/backends/" ":/plugins/") || return 2
  if printf '%s\n' "$changed" | grep -q '^plugins/'; then
    for d in "$head_backends"/*/; do [ -d "$d" ] && basename "$d"; done
  else
    printf '%s\n' "$changed" | sed -n 's#^backends/\([^/]*\)/.*#\1#p' | sort -u
  fi
}
if [ -n "$ab_ref" ]; then
  git rev-parse --verify --quiet "$ab_ref^{commit}" > /dev/null ||
    { echo "ci-bench: --ab $ab_ref: not a commit of this repository" >&2; exit 2; }
  [ -z "$given_set" ] || { echo "ci-bench: --ab runs the suite itself, so it cannot go with --set" >&2; exit 2; }
  head_backends=$(dirname "$(dirname "$(readlink -f "$opbench")")")/backends
  backends=$ab_backends
  [ -n "$backends" ] || backends=$(changed_backends) || { echo "ci-bench: --ab $ab_ref: git diff failed" >&2; exit 2; }
  if [ -z "$backends" ]; then
    echo "ci-bench: no plugin source changed since $ab_ref (a harness-only change): the archive comparison gates"
  else
    base_tree=$(mktemp -d /tmp/opbench-ab-base-XXXXXX)
    trap 'git worktree remove --force "$base_tree" > /dev/null 2>&1 || true; rm -rf "$base_tree"' EXIT
    git worktree add --detach --force "$base_tree" "$ab_ref" > /dev/null
    echo "::group::build $ab_ref's plugins in $base_tree/build" 2>/dev/null || true
    meson setup "$base_tree/build" "$base_tree" > "$base_tree/setup.log" 2>&1 ||
      { cat "$base_tree/setup.log" >&2; echo "ci-bench: cannot configure $ab_ref" >&2; exit 3; }
    echo "::endgroup::" 2>/dev/null || true
    [ -n "$out" ] || out="results/ci-ab-$(date -u +%Y%m%dT%H%M%SZ)"
    ab_rc=0
    markdown=""
    for be in $backends; do
      base_plugin="$base_tree/build/backends/$be/opbench-backend-$be.so"
      new_plugin="$head_backends/$be/opbench-backend-$be.so"
      ninja -C "$base_tree/build" "backends/$be/opbench-backend-$be.so" > "$base_tree/build-$be.log" 2>&1 ||
        { echo "ci-bench: $be: $ab_ref's plugin did not build (new backend?): skipped"; continue; }
      [ -f "$new_plugin" ] || { echo "ci-bench: $be: no head build at $new_plugin: skipped"; continue; }
      set +e
      # shellcheck disable=SC2086 # ab_args is a list of options
      "$opbench" ab "$suite" --plugin "$be@base=$base_plugin" --plugin "$be@new=$new_plugin" \
        --out "$out-$be.json" $ab_args
      rc=$?
      [ $rc -le 1 ] || { echo "ci-bench: opbench ab failed (exit $rc)" >&2; exit $rc; }
      # shellcheck disable=SC2086
      part=$("$opbench" compare "$out-$be.json" --fail-on-regression --format markdown $compare_args)
      crc=$?
      set -e
      [ $crc -le 1 ] || { echo "ci-bench: opbench compare failed (exit $crc)" >&2; exit $crc; }
      [ $rc -eq 0 ] && [ $crc -eq 0 ] || ab_rc=1
      markdown="$markdown
$part"
    done
    report="## opbench: $(basename "$suite") paired, $ab_ref -> HEAD on $(hostname)
$markdown
"
    printf '%s\n' "$report"
    for target in "$summary" "${GITHUB_STEP_SUMMARY:-}"; do
      [ -n "$target" ] && printf '%s\n' "$report" >> "$target"
    done
    if [ $ab_rc -ne 0 ]; then
      echo "ci-bench: REGRESSION (paired): a case of a changed backend is slower than at $ab_ref beyond the threshold, or failed" >&2
      exit 1
    fi
    echo "ci-bench: gate passed (paired against $ab_ref)"
    exit 0
  fi
fi
if [ -n "$given_set" ]; then
  [ -z "$out" ] || { echo "ci-bench: --set and --out exclude each other (--set gates a set that exists)" >&2; exit 2; }
  [ ${#run_args[@]} -eq 0 ] || { echo "ci-bench: --set runs nothing, so it takes no opbench run options" >&2; exit 2; }
  [ -f "$given_set" ] || { echo "ci-bench: --set $given_set: no such file" >&2; exit 2; }
  out=$given_set
  # As a run would exit: 1 when an entry failed verification or execution.
  run_rc=$(python3 -c 'import json, sys
print(int(any(b.get("status") == "failed" for b in json.load(open(sys.argv[1]))["benchmarks"])))' "$out") ||
    { echo "ci-bench: --set $out is not a result set" >&2; exit 2; }
else
  [ -n "$out" ] || out="results/ci-$(date -u +%Y%m%dT%H%M%SZ).json"
  echo "::group::opbench run $suite" 2>/dev/null || true
  set +e
  # Interleaved repetitions: each case spread over the run, so a slow spell of
  # a shared runner touches a few repetitions of many cases instead of all of
  # a few (docs/measurement.md, "Layout and process effects"). A resumable run
  # matters less here than a gate that does not fail on the runner's drift.
  "$opbench" run "$suite" --no-progress --out "$out" --benchmark_enable_random_interleaving=true "${run_args[@]}"
  run_rc=$?
  set -e
  echo "::endgroup::" 2>/dev/null || true
  if [ $run_rc -ne 0 ] && [ $run_rc -ne 1 ]; then
    echo "ci-bench: opbench run failed (exit $run_rc)" >&2
    exit $run_rc
  fi
fi

# shellcheck disable=SC2086 # compare_args is a list of options
set +e
markdown=$("$opbench" compare --baseline-from "$archive" --allow-no-baseline --fail-on-regression \
           --format markdown $compare_args "$out")
gate_rc=$?
set -e
if [ $gate_rc -ne 0 ] && [ $gate_rc -ne 1 ]; then
  echo "ci-bench: opbench compare failed (exit $gate_rc)" >&2
  exit $gate_rc
fi
[ -n "$markdown" ] || markdown="No baseline in $archive for this machine, suite and build type yet: nothing to compare."
report="## opbench: $(basename "$suite") on $(hostname)

$markdown
"
printf '%s\n' "$report"
for target in "$summary" "${GITHUB_STEP_SUMMARY:-}"; do
  [ -n "$target" ] && printf '%s\n' "$report" >> "$target"
done

if [ "$archive_mode" = always ] || { [ "$archive_mode" = on-pass ] && [ $gate_rc -eq 0 ] && [ $run_rc -eq 0 ]; }; then
  "$opbench" archive "$archive" "$out"
  # Bounds the archive: history, --baseline-from and run-to-run ranges read at
  # most the last few dozen runs (docs/ci.md, "The archive").
  [ "$keep" = 0 ] || "$opbench" archive prune "$archive" --keep "$keep"
else
  echo "ci-bench: not archived ($out): gate exit $gate_rc, run exit $run_rc, archive mode $archive_mode"
fi

# The archive's change points: a regression among its newest runs fails too.
changes_rc=0
if [ "$changes_gate" != 0 ]; then
  suite_name=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["context"]["opbench"]["suite"]["name"])' "$out") ||
    { echo "ci-bench: $out: no suite name in its context" >&2; exit 2; }
  changes_err=$(mktemp /tmp/opbench-changes-XXXXXX)
  set +e
  changes=$("$opbench" history "$archive" --suite "$suite_name" --changes --fail-on-change-in "$changes_gate" \
            --format markdown 2> "$changes_err")
  changes_rc=$?
  set -e
  cat "$changes_err" >&2
  if [ $changes_rc -eq 2 ] && grep -q "change points need at least" "$changes_err"; then
    echo "ci-bench: change points: the archive holds too few runs yet (see above); not gated"
    changes_rc=0
  elif [ $changes_rc -gt 1 ]; then
    rm -f "$changes_err"
    echo "ci-bench: opbench history --changes failed (exit $changes_rc)" >&2
    exit $changes_rc
  else
    for target in "$summary" "${GITHUB_STEP_SUMMARY:-}"; do
      [ -n "$target" ] && printf '%s\n' "$changes" >> "$target"
    done
  fi
  rm -f "$changes_err"
fi

if [ $gate_rc -ne 0 ]; then
  echo "ci-bench: REGRESSION: a case is slower than the baseline beyond the threshold" >&2
  exit 1
fi
if [ $changes_rc -ne 0 ]; then
  echo "ci-bench: REGRESSION: a change point to slower among the newest $changes_gate archived runs (see above)" >&2
  exit 1
fi
if [ $run_rc -ne 0 ]; then
  echo "ci-bench: a case failed verification or execution (see the run's output)" >&2
  exit 1
fi
echo "ci-bench: gate passed"
