#!/usr/bin/env bash
# Runs a suite on a Slurm cluster as a job array of shards and merges them.
#   scripts/slurm-run.sh SUITE --shards N [options] [sbatch options...] [-- opbench run options...]
#   scripts/slurm-run.sh --merge OUT   submit OUT's merge again (after a shard was requeued)
# options:
#   --shards N        the array's size: shard i of N runs `opbench run SUITE --shard i/N` (default 1)
#   --out DIR         sets, journals, logs, merged set (default results/slurm-<suite>-<UTC time>);
#                     on a file system every node sees, as the checkout with opbench must be
#   --opbench PATH    the opbench to run (default build/harness/opbench of this checkout)
#   --per-node-type   each --constraint given is a node type: the suite runs once per type
#                     (N shards each, merged per type into DIR/<type>/merged.json), then
#                     `opbench compare --by machine` over the types (DIR/compare.txt)
#   --no-exclusive    share nodes with other jobs (default: --exclusive, a whole node per shard)
#   --allow-mixed-machines   let the merge take shards from different machine ids
#   --parsable        print "ARRAY_JOB MERGE_JOB MERGED_SET" per split (and "compare JOB FILE")
# Other options before `--` go to sbatch for the shard jobs (--partition, --time,
# --constraint, --account ...); the merge job gets the ones that say where a job
# may run (--partition, --account, --qos, --reservation, --clusters).
# Each shard: its own set DIR/shard-i.json and journal, its log DIR/logs/shard-i.log
# (appended across attempts), and DIR/shard-i.attempts: one line per attempt with
# the node, machine id (`opbench machine --id`) and SLURM_RESTART_COUNT. The array is
# --requeue: a shard requeued (node lost, preempted, `scontrol requeue`) resumes from
# its journal, keeping what finished. The merge job runs after every shard has ended
# (afterany, not afterok: with afterok a failed shard leaves the merge pending
# forever, or silently cancelled; here the merge runs and names the shard) and
# `opbench merge` refuses a missing, incomplete or failed shard by its index, and
# shards of different machine ids. docs/ci.md, "A Slurm job array".
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "slurm-run: $*" >&2; exit 2; }
usage() { sed -n '2,3p' "$0" | sed 's/^# \{0,1\}/usage: /' >&2; exit 2; }

command -v sbatch >/dev/null || { echo "slurm-run: sbatch not found: run this on a Slurm login node" >&2; exit 3; }

# printf %q of each argument: values baked into the generated job scripts.
quote() { local out="" a; for a in "$@"; do out+=" $(printf '%q' "$a")"; done; echo "${out# }"; }

# --- the job scripts (written into DIR; sbatch keeps its own copy) -----------

write_shard_script() { # DIR COUNT
  cat >"$1/shard.sh" <<EOF
#!/bin/bash
# Shard \$SLURM_ARRAY_TASK_ID of $2, written by scripts/slurm-run.sh.
set -uo pipefail
opbench=$(quote "$opbench")
suite=$(quote "$suite")
dir=$(quote "$1")
count=$2
run_args=($(quote "${run_args[@]}"))
EOF
  cat >>"$1/shard.sh" <<'EOF'
i=${SLURM_ARRAY_TASK_ID:?run by sbatch --array}
set_path="$dir/shard-$i.json"
journal="$set_path.journal"
attempts="$dir/shard-$i.attempts"
node=${SLURMD_NODENAME:-$(hostname -s)}
restarts=${SLURM_RESTART_COUNT:-0}
if ! machine=$("$opbench" machine --id); then
  echo "slurm-run: shard $i: $opbench does not run on $node" >&2
  { echo "attempt=$((restarts + 1)) node=$node machine=none job=${SLURM_ARRAY_JOB_ID}_$i start=$(date -u +%FT%TZ)"
    echo "end=$(date -u +%FT%TZ) exit=3 ($opbench does not run on $node)"; } >>"$attempts"
  exit 3
fi
echo "slurm-run: shard $i/$count, job ${SLURM_ARRAY_JOB_ID}_$i, attempt $((restarts + 1)) (SLURM_RESTART_COUNT=$restarts), node $node, machine $machine"

# A journal from an attempt on another machine type is not resumed: its
# entries would join this machine's under one context. It is kept aside and
# the shard starts over.
if [ -e "$journal" ] && [ -s "$attempts" ]; then
  before=$(sed -n 's/.* machine=\([^ ]*\).*/\1/p' "$attempts" | grep -vx none | tail -n 1) # none: opbench did not run
  if [ -n "$before" ] && [ "$before" != "$machine" ]; then
    echo "slurm-run: shard $i: the last attempt ran on machine $before, this one on $machine: starting over (kept: $set_path.$before)"
    mv "$set_path" "$set_path.$before" 2>/dev/null || true
    mv "$journal" "$set_path.$before.journal"
  fi
fi
echo "attempt=$((restarts + 1)) node=$node machine=$machine job=${SLURM_ARRAY_JOB_ID}_$i start=$(date -u +%FT%TZ)" >>"$attempts"

complete_set() {
  [ -s "$1" ] && python3 -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["context"]["opbench"].get("complete", True) else 1)' "$1" 2>/dev/null
}
if [ -e "$journal" ]; then
  # What finished is kept; only the rest runs, with the first attempt's arguments.
  echo "slurm-run: shard $i: resuming from $journal ($(grep -c '"case"' "$journal" || true) finished entries kept)"
  cmd=("$opbench" run --resume "$set_path" --no-progress)
elif complete_set "$set_path"; then
  echo "slurm-run: shard $i: $set_path is already complete"
  echo "end=$(date -u +%FT%TZ) exit=0 (already complete)" >>"$attempts"
  exit 0
else
  force=(); [ -e "$set_path" ] && force=(--force) # the empty file a killed first attempt reserved
  cmd=("$opbench" run "$suite" --shard "$i/$count" --out "$set_path" "${force[@]}" --no-progress "${run_args[@]}")
fi
# scancel, a requeue or the time limit send SIGTERM to every process of the
# job: opbench writes the set of what finished ("complete": false) and its
# journal stays; this shell waits for it (a trap, not an ignore, so opbench
# keeps its own handler) and records how it ended.
trap 'echo "slurm-run: shard $i: SIGTERM (scancel, requeue or time limit); opbench keeps what finished"' TERM
"${cmd[@]}" &
pid=$!
# `wait` also returns when the trap runs: wait again until opbench is gone,
# then once more for its own exit status (bash keeps it).
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; done
wait "$pid"
rc=$?
echo "end=$(date -u +%FT%TZ) exit=$rc" >>"$attempts"
echo "slurm-run: shard $i: opbench exited $rc"
exit "$rc"
EOF
  chmod +x "$1/shard.sh"
}

write_merge_script() { # DIR COUNT
  cat >"$1/merge.sh" <<EOF
#!/bin/bash
# The merge of $2 shards, written by scripts/slurm-run.sh.
set -uo pipefail
opbench=$(quote "$opbench")
dir=$(quote "$1")
count=$2
merge_args=($(quote "${merge_args[@]}"))
EOF
  cat >>"$1/merge.sh" <<'EOF'
array=$(sed -n 's/^array=//p' "$dir/slurm-run.env" 2>/dev/null)
# How shard I's last attempt ended, from its attempts file; "" when it ended well.
shard_trouble() {
  local last
  last=$(tail -n 1 "$dir/shard-$1.attempts" 2>/dev/null)
  case "$last" in
    "") echo "never started (cancelled while pending?)" ;;
    attempt=*) echo "started and recorded no end: still running, or its node was lost" ;;
    *"exit=0"*) ;;
    *) echo "ended with exit=${last##* exit=}" ;;
  esac
}
sets=() trouble=0
for i in $(seq 1 "$count"); do
  f="$dir/shard-$i.json"
  last=$(tail -n 2 "$dir/shard-$i.attempts" 2>/dev/null | tr '\n' ' ')
  echo "slurm-run: shard $i/$count: ${last:-never started}"
  why=$(shard_trouble "$i")
  if [ -n "$why" ] || [ ! -s "$f" ]; then
    trouble=1
    echo "slurm-run: shard $i/$count ${why:-wrote no result set}: log $dir/logs/shard-$i.log" >&2
  fi
  # Every file a shard left, an empty one too (a run's reservation): opbench
  # merge names each that is not a set yet, with its shard (from its journal).
  if [ -e "$f" ]; then sets+=("$f"); fi
done
[ ${#sets[@]} -gt 0 ] || { echo "slurm-run: no shard wrote a result set" >&2; exit 1; }
"$opbench" merge "${sets[@]}" -o "$dir/merged.json" --force "${merge_args[@]}"
rc=$?
if [ $rc -eq 0 ]; then echo "slurm-run: merged set: $dir/merged.json"; exit 0; fi
echo "slurm-run: merge refused (exit $rc): nothing written" >&2
if [ "$trouble" -eq 1 ]; then
  echo "slurm-run: for each shard I above: \`scontrol requeue ${array}_I\` (it resumes from its" \
    "journal), then \`scripts/slurm-run.sh --merge $dir\`" >&2
fi
exit $rc
EOF
  chmod +x "$1/merge.sh"
}

write_compare_script() { # DIR TYPE...
  local dir=$1; shift
  cat >"$dir/compare.sh" <<EOF
#!/bin/bash
# opbench compare --by machine over the node types, written by scripts/slurm-run.sh.
set -uo pipefail
opbench=$(quote "$opbench")
dir=$(quote "$dir")
types=($(quote "$@"))
EOF
  cat >>"$dir/compare.sh" <<'EOF'
sets=()
for t in "${types[@]}"; do
  if [ -s "$dir/$t/merged.json" ]; then
    # compare names a column after its set's file: DIR/TYPE.json, not TYPE/merged.json.
    ln -f "$dir/$t/merged.json" "$dir/$t.json" 2>/dev/null || cp -f "$dir/$t/merged.json" "$dir/$t.json"
    sets+=("$dir/$t.json")
  else echo "slurm-run: node type $t has no merged set ($dir/$t/logs/merge.log says why)" >&2; fi
done
[ ${#sets[@]} -ge 2 ] || { echo "slurm-run: fewer than two node types merged: nothing to compare" >&2; exit 1; }
"$opbench" compare --by machine "${sets[@]}" >"$dir/compare.txt" && cat "$dir/compare.txt"
EOF
  chmod +x "$dir/compare.sh"
}

# --- submitting -----------------------------------------------------------------

# Submits DIR's array (N shards) and merge; prints the ids.
submit_split() { # DIR LABEL [extra sbatch options...]
  local dir=$1 label=$2; shift 2
  mkdir -p "$dir/logs"
  write_shard_script "$dir" "$shards"
  write_merge_script "$dir" "$shards"
  local array merge
  array=$(sbatch --parsable --job-name="opbench-$suite_name" --array="1-$shards" --requeue \
    --open-mode=append --output="$dir/logs/shard-%a.log" "${exclusive[@]}" "${sbatch_args[@]}" "$@" \
    "$dir/shard.sh")
  array=${array%%;*}
  merge=$(submit_merge "$dir" "$array")
  printf 'array=%s\nshards=%s\n' "$array" "$shards" >"$dir/slurm-run.env"
  if [ "$parsable" -eq 1 ]; then
    echo "$array $merge $dir/merged.json"
  else
    echo "slurm-run: $label: $shards shard(s) as job array $array (${array}_1 .. ${array}_$shards), logs in $dir/logs/"
    echo "slurm-run: $label: merge job $merge (after every shard ends) -> $dir/merged.json"
  fi
  merge_jobs+=("$merge")
}

submit_merge() { # DIR ARRAY_JOB
  local id
  id=$(sbatch --parsable --job-name="opbench-merge" --dependency="afterany:$2" --ntasks=1 \
    --output="$1/logs/merge.log" --open-mode=append "${placement_args[@]}" "$1/merge.sh")
  echo "${id%%;*}"
}

# --- the pre-check: every shard's case list, before anything is submitted ----------

# Exit status of `opbench run SUITE --shard I/N --list` with the run options;
# its stderr goes to $precheck_err.
list_ok() { "$opbench" run "$suite" --shard "$1" --list "${run_args[@]}" >/dev/null 2>"$precheck_err"; }

# The run options' --benchmark_filter, "" when none.
filter_of() {
  local a f=""
  for a in "$@"; do case "$a" in --benchmark_filter=*) f=${a#*=} ;; esac; done
  printf '%s' "$f"
}

# The most shards below --shards whose every shard keeps a case (each count
# tried from the top stops at its first empty shard; 200 lists at most, then
# only 1); "" when none.
fitting_shards() {
  local k i tries=0
  for ((k = shards - 1; k >= 2 && tries < 200; k--)); do
    for ((i = 1; i <= k; i++)); do
      tries=$((tries + 1))
      list_ok "$i/$k" || continue 2
    done
    echo "$k"
    return
  done
  if list_ok 1/1; then echo 1; fi
}

# Caught here, not by failed jobs: each shard's job runs `opbench run SUITE
# --shard i/N` with the run options, and one that has no case fails. A
# --benchmark_filter can empty shard 1 of 3 and keep cases in the others, so
# every shard is listed, not one.
precheck_shards() {
  local i empty=() first_err="" filter k
  precheck_err=$(mktemp)
  filter=$(filter_of "${run_args[@]}")
  for i in $(seq 1 "$shards"); do
    list_ok "$i/$shards" && continue
    if [ -z "$filter" ] || ! grep -q -- '--benchmark_filter' "$precheck_err"; then
      sed 's/^/  /' "$precheck_err" >&2; rm -f "$precheck_err"
      die "opbench refused shard $i/$shards (above): nothing submitted; fix the suite, --shards or the run options"
    fi
    empty+=("$i/$shards")
    [ -n "$first_err" ] || first_err=$(sed 's/^/  /' "$precheck_err")
  done
  [ ${#empty[@]} -eq 0 ] && { rm -f "$precheck_err"; return 0; }
  local which="shard ${empty[0]}"
  [ ${#empty[@]} -eq 1 ] || which="shards $(IFS=,; echo "${empty[*]}" | sed 's/,/, /g')"
  echo "$first_err" >&2
  echo "slurm-run: --benchmark_filter=$filter leaves $which with no case, so" \
    "${#empty[@]} job(s) would fail; nothing submitted" >&2
  k=$(fitting_shards)
  rm -f "$precheck_err"
  [ -n "$k" ] || die "--benchmark_filter=$filter matches no case of $suite: widen it (opbench run SUITE --list)"
  die "use --shards $k (each of its $k shards keeps a case: checked), or widen the filter"
}

# --merge OUT: the merge again, after the array's last task ends.
if [ "${1:-}" = "--merge" ]; then
  [ $# -eq 2 ] || usage
  dir=$(cd "$2" && pwd) || die "no directory $2"
  [ -f "$dir/slurm-run.env" ] || die "$dir has no slurm-run.env: not a directory scripts/slurm-run.sh submitted"
  array=$(sed -n 's/^array=//p' "$dir/slurm-run.env")
  placement_args=()
  id=$(submit_merge "$dir" "$array")
  echo "slurm-run: merge job $id (after job array $array ends) -> $dir/merged.json"
  exit 0
fi

[ $# -ge 1 ] || usage
case "$1" in -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; -*) usage ;; esac
suite=$(realpath "$1"); shift
[ -f "$suite" ] || die "no suite file $suite"
shards=1 out="" opbench="$here/build/harness/opbench" per_type=0 parsable=0
exclusive=(--exclusive)
sbatch_args=() placement_args=() constraints=() run_args=() merge_args=() merge_jobs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards=${2:?--shards needs a number}; shift 2 ;;
    --shards=*) shards=${1#*=}; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --opbench) opbench=${2:?}; shift 2 ;;
    --opbench=*) opbench=${1#*=}; shift ;;
    --per-node-type) per_type=1; shift ;;
    --no-exclusive) exclusive=(); shift ;;
    --allow-mixed-machines) merge_args+=(--allow-mixed-machines); shift ;;
    --parsable) parsable=1; shift ;;
    --) shift; run_args=("$@"); break ;;
    -a|--array|--array=*) die "$1: the array is --shards N's (1-N)" ;;
    -C|--constraint) constraints+=("${2:?$1 needs a value}"); sbatch_args+=("$1" "$2"); shift 2 ;;
    --constraint=*) constraints+=("${1#*=}"); sbatch_args+=("$1"); shift ;;
    -p|--partition|-A|--account|--qos|--reservation|-M|--clusters)
      placement_args+=("$1" "${2:?$1 needs a value}"); sbatch_args+=("$1" "$2"); shift 2 ;;
    --partition=*|--account=*|--qos=*|--reservation=*|--clusters=*)
      placement_args+=("$1"); sbatch_args+=("$1"); shift ;;
    *) sbatch_args+=("$1"); shift ;;
  esac
done
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards '$shards': expected a whole number >= 1"
[ -x "$opbench" ] || die "no opbench at $opbench: build it (meson compile -C build) or pass --opbench PATH"
opbench=$(realpath "$opbench")
precheck_shards
suite_name=$(basename "$suite" .toml)
[ -n "$out" ] || out="results/slurm-$suite_name-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out"
out=$(realpath "$out")
if compgen -G "$out/shard-*.json" >/dev/null || compgen -G "$out/*/shard-*.json" >/dev/null; then
  die "$out already holds shards of another submission: give a fresh --out"
fi

if [ "$per_type" -eq 0 ]; then
  submit_split "$out" "$suite_name"
  exit 0
fi

[ ${#constraints[@]} -ge 2 ] || die "--per-node-type needs a --constraint per node type (two or more)"
# Each type's jobs get only that type's constraint.
only_others=()
skip=0
for a in "${sbatch_args[@]}"; do
  if [ $skip -eq 1 ]; then skip=0; continue; fi
  case "$a" in -C|--constraint) skip=1 ;; --constraint=*) ;; *) only_others+=("$a") ;; esac
done
sbatch_args=("${only_others[@]}")
types=()
for c in "${constraints[@]}"; do
  t=$(printf '%s' "$c" | tr -c 'A-Za-z0-9._-' '_')
  types+=("$t")
  submit_split "$out/$t" "node type $c" --constraint="$c"
done
write_compare_script "$out" "${types[@]}"
deps=$(IFS=:; echo "${merge_jobs[*]}")
cmp=$(sbatch --parsable --job-name=opbench-compare --dependency="afterany:$deps" --ntasks=1 \
  --output="$out/compare.log" "${placement_args[@]}" "$out/compare.sh")
cmp=${cmp%%;*}
if [ "$parsable" -eq 1 ]; then
  echo "compare $cmp $out/compare.txt"
else
  echo "slurm-run: compare job $cmp (after every merge) -> $out/compare.txt"
fi
