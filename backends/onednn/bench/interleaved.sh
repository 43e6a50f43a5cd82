#!/bin/sh
# Plugin-overhead comparison on a shared machine: for each problem, the direct
# oneDNN loop and opbench run back to back, twice (A B A B), so both sides see
# the same background load. Then side_by_side.py pools the runs per side.
#   [DTYPES="f32 bf16"] [THREADS="1 0"] [SHAPES="1024/N:768/K:768/tb ..."] backends/onednn/bench/interleaved.sh BUILD_DIR OUT_DIR [ROUNDS]
set -eu
B=${1:?build dir}
O=${2:?output dir}
R=${3:-2}
H=$(dirname "$0")
mkdir -p "$O"
i=0
for dt in ${DTYPES:-f32 bf16}; do
  for th in ${THREADS:-1 0}; do
    for shape in ${SHAPES:-512/N:512/K:512 1024/N:1024/K:1024 2048/N:2048/K:2048 \
                 1024/N:2304/K:768/tb 1024/N:768/K:768/tb 1024/N:3072/K:768/tb 1024/N:768/K:3072/tb \
                 2048/N:2304/K:768/tb 2048/N:3072/K:768/tb 2048/N:768/K:3072/tb}; do
      case $shape in
        */tb) s=${shape%/tb}; dshape="$s/tb:1/bias:1"; oshape="$s/tB:1/bias:1" ;;
        *) dshape=$shape; oshape=$shape ;;
      esac
      if [ "$th" = 0 ]; then dth=$(nproc); oth="dt:$dt/be:onednn"; else dth=1; oth="dt:$dt/thr:1/"; fi
      for r in $(seq "$R"); do
        i=$((i + 1))
        "$B/backends/onednn/bench/onednn-direct-matmul-bench" \
          --benchmark_filter="M:$dshape/dt:$dt/threads:$dth/" --benchmark_min_time=0.5 \
          --benchmark_out="$O/direct.$i.json" --benchmark_out_format=json > /dev/null
        "$B/harness/opbench" run "$H/side_by_side.toml" --repetitions 1 --no-progress \
          --benchmark_filter="M:$oshape/variant:default/$oth" --out "$O/opbench.$i.json" > /dev/null
      done
    done
  done
done
"$H/side_by_side.py" "$O"/direct.*.json "$O"/opbench.*.json
