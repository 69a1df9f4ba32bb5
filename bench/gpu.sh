#!/usr/bin/env bash
# The GPU checks of issue 30 in one command, sized for a 10-minute call (each part has its own time limit, T1-T4 in
# seconds, which the environment may override; what a part measured before its limit is kept):
#   1. fused training frames/s of every JAX mini-game at 32, 4096, 1024 and 256 envs (bench/fused_maps.py; the
#      extremes first, every map at one size before the next size);
#   2. the fused / host ratio on jax:MoveToBeacon (bench/fused.py's minigame section; target >= 20x on a GPU);
#   3. the wall time of the default `reaver train` (A2C on jax:MoveToBeacon, 600k frames) until its rolling return
#      first reaches 25, and the 100-episode `reaver test` score of its last weights.
# Run from the checkout's root after `pip install -e ".[dev]"` (or ".[bench]"); results go to $OUT (default
# bench_gpu_out/): one .txt and one .json per part, and the run directory of part 3.
#   bash bench/gpu.sh              # on the GPU machine
#   QUICK=1 bash bench/gpu.sh      # a CPU smoke run of the same script (tiny sizes, a minute or two)
#   PARTS=12 bash bench/gpu.sh     # only parts 1 and 2
set -uo pipefail
OUT=${OUT:-bench_gpu_out}
mkdir -p "$OUT"
if [ -n "${QUICK:-}" ]; then
  ENVS="16"; UPD=2; REP=1; FUSED_ARGS="--quick"; STEPS=20480; T1=${T1:-300}; T2=${T2:-300}; T3=${T3:-300}; T4=${T4:-120}
else
  ENVS="32 4096 1024 256"; UPD=10; REP=3; FUSED_ARGS="--n-envs 256 --host-workers 8 --seeds 1 --repeats 3"
  STEPS=600000; T1=${T1:-180}; T2=${T2:-120}; T3=${T3:-150}; T4=${T4:-75}
fi
status=0
PARTS=${PARTS:-123}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi";
  python -c "import jax; print('jax', jax.__version__, jax.devices())"; } | tee "$OUT/machine.txt"

if [[ $PARTS == *1* ]]; then
echo "== 1. fused training frames/s per map (envs: $ENVS)"
timeout $T1 python bench/fused_maps.py --n-envs $ENVS --updates $UPD --repeats $REP --json "$OUT/fused_maps.json" \
  | tee "$OUT/fused_maps.txt" || { echo "part 1 failed or ran past ${T1}s"; status=1; }
fi

if [[ $PARTS == *2* ]]; then
echo "== 2. fused / host on jax:MoveToBeacon"
timeout $T2 python bench/fused.py --only minigame $FUSED_ARGS --json "$OUT/fused_host.json" \
  | tee "$OUT/fused_host.txt" || { echo "part 2 failed or ran past ${T2}s"; status=1; }
fi

if [[ $PARTS == *3* ]]; then
echo "== 3. the default reaver train until a rolling return of 25"
rm -rf "$OUT/results/gpu_default"
start=$(date +%s.%N)
timeout $T3 reaver train --steps $STEPS --seed 0 --run-id gpu_default --results-dir "$OUT/results" \
  > "$OUT/default.txt" 2>&1 || { echo "part 3 failed or ran past ${T3}s"; status=1; }
end=$(date +%s.%N)
timeout $T4 reaver test gpu_default --results-dir "$OUT/results" >> "$OUT/default.txt" 2>&1 \
  || { echo "the test of part 3 failed or ran past ${T4}s"; status=1; }
tail -3 "$OUT/default.txt"
python - "$OUT/results/gpu_default" "$start" "$end" <<'EOF' | tee "$OUT/default_summary.txt"
import json, sys
from pathlib import Path
run, start, end = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
rows = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines()] if (run / 'metrics.jsonl').exists() else []
hit = next((r for r in rows if (r.get('ep_return_mean') or 0) >= 25), None)
print(f"reaver train: {end - start:.0f} s for the whole command (compilation included)")
print(f"rolling return first >= 25: " + (f"{hit['time']:.0f} s into training, at {hit['frames']:,} frames" if hit else
      f"not reached (last {rows[-1]['ep_return_mean']:.2f} at {rows[-1]['frames']:,} frames)" if rows else "no metrics"))
ev = run / 'evaluation.json'
if ev.exists():
    e = json.loads(ev.read_text()); print(f"test: {e['mean']:.2f} +- {e['std']:.2f} over {e['episodes']} episodes")
EOF
fi
exit $status
