#!/bin/sh
# Reproduces every figure in backends/onednn/README.md, in one session:
#   backends/onednn/bench/measure.sh BUILD_DIR OUT_DIR
# BUILD_DIR holds a build with the naive and onednn backends (e.g. build-onednn).
set -eu
B=${1:?build dir}
O=${2:?output dir}
H=$(dirname "$0")
mkdir -p "$O"
{ lscpu | grep 'Model name'; nproc; uptime; } > "$O/machine.txt"

# 1. plugin overhead: direct oneDNN loop, then the same problems through opbench
"$B/backends/onednn/bench/onednn-direct-matmul-bench" --benchmark_min_time=0.5 \
    --benchmark_repetitions=3 --benchmark_out="$O/direct.json" --benchmark_out_format=json
"$B/harness/opbench" run "$H/side_by_side.toml" --out "$O/side_by_side.json" --no-progress
uptime >> "$O/machine.txt"
"$H/side_by_side.py" "$O/side_by_side.json" "$O/direct.json" > "$O/side_by_side.md"

# 2. suites/gemm.toml through opbench (all threads); its square and GPT-2
#    linear rows join the direct loop's all-threads rows
"$B/harness/opbench" run suites/gemm.toml --backends onednn --out "$O/gemm.json" --no-progress
"$H/side_by_side.py" "$O/gemm.json" "$O/direct.json" > "$O/gemm_vs_direct.md"

# 3. naive vs onednn, one thread (naive is single-threaded) and all threads;
#    transformer-shapes with one repetition (naive takes seconds per Llama GEMM)
"$B/harness/opbench" run suites/quick.toml --backends naive,onednn --threads 1 --out "$O/quick_t1.json" --no-progress
"$B/harness/opbench" run suites/quick.toml --backends naive,onednn --out "$O/quick_all.json" --no-progress
"$B/harness/opbench" run suites/transformer-shapes.toml --backends naive,onednn --threads 1 \
    --repetitions 1 --min-samples 2 --warmup 1 --out "$O/ts_t1.json" --no-progress
for f in quick_t1 quick_all ts_t1; do "$H/naive_vs_onednn.py" "$O/$f.json" > "$O/$f.md"; done
uptime >> "$O/machine.txt"
