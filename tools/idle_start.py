#!/usr/bin/env python
"""Diagnostic for issue 5: start a jax:MoveToBeacon agent mostly idle, so that its rare clicks are carried out whole.

Writes a new run directory NEW_RUN holding RUN's `config.gin` and its latest checkpoint with the function-id head's
bias for `no_op` raised so that `no_op` has probability P where the six functions of the map (`MiniGameSettings
.functions = 'core'`) are available and the head's other outputs are equal (every other weight kept). Take RUN from a
run of one update, so the weights are those of initialisation:

    reaver train --agent a2c --steps 512 --run-id init_a2c --gin-param "make_model.spatial_init = 0.1"
    python tools/idle_start.py init_a2c idle90 [--p 0.9] [--results-dir results]
    reaver train --agent a2c --steps 600000 --initialize-from idle90 --gin-param "A2C.entropy_coef = 0.001"

(the settings of 2026-12-02 before the default's screen head and entropy bonus changed)

The hope was a partial collapse onto `no_op`, where each click walks to its end and gets clean credit. It did not
hold (seed 0, 2026-12-02): the agent left `no_op` within ~40k frames for queueing a click every step and scored 2.02
+- 1.47 at 600k frames (README, Results).
"""
import argparse, math, shutil, sys
from pathlib import Path
import numpy as np
from reaver_nb.training.checkpoint import latest_checkpoint, read_checkpoint, save_checkpoint
from reaver_nb.envs.minigames import CORE
from reaver_nb.envs.sc2 import function_ids

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('run_id'); ap.add_argument('new_run_id')
ap.add_argument('--p', type=float, default=0.9, help="no_op's probability among the six functions (default: 0.9)")
ap.add_argument('--results-dir', default='results')
args = ap.parse_args()
if not 0 < args.p < 1: sys.exit(f"--p must lie strictly between 0 and 1, got {args.p}.")
src, dst = Path(args.results_dir) / args.run_id, Path(args.results_dir) / args.new_run_id
ckpt = latest_checkpoint(src / 'checkpoints')
if not (src / 'config.gin').exists() or ckpt is None:
    sys.exit(f"No run {args.run_id!r} with a checkpoint in {args.results_dir}.")
if dst.exists(): sys.exit(f"{dst} exists; choose another NEW_RUN or delete it.")
raw = read_checkpoint(ckpt)
try: params = raw['state']['agent']['params']['params']
except KeyError: sys.exit(f"{ckpt} is not a fused run's checkpoint (no state/agent/params).")
gin_text = (src / 'config.gin').read_text()
fset = next((l.split('=')[1].strip().strip("'\"") for l in gin_text.splitlines()
             if l.startswith('SC2Settings.functions')), 'minigames')
slot = list(function_ids(fset)).index(0)
bias = np.array(params['logits_function_id']['bias'])
bias[..., slot] += math.log(args.p / (1 - args.p) * (len(CORE) - 1))
params['logits_function_id']['bias'] = bias
dst.mkdir(parents=True)
shutil.copy(src / 'config.gin', dst / 'config.gin')
step = int(ckpt.name.split('_')[1].split('.')[0])
path = save_checkpoint(dst / 'checkpoints', step, raw)
print(f"{path}: {args.run_id}'s weights at {step:,} frames with no_op at probability {args.p} among the six functions.")
