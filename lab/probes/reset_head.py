#!/usr/bin/env python
"""Diagnostic for issue 5: give a trained run's agent a fresh action head, keeping every other weight.

Writes a new run directory NEW_RUN holding RUN's `config.gin` and its latest checkpoint with the output layer of head
HEAD (`logits_<HEAD>` or `spatial_<HEAD>`, every seed) set to zero, so that head starts uniform again (for `queued`:
P = 0.5), or with `--scale S` multiplied by S. Train on from it with `reaver train --initialize-from NEW_RUN`
(weights only; a fresh optimiser and counters):

    python lab/probes/reset_head.py RUN NEW_RUN [--head queued] [--scale S] [--results-dir results]
    reaver train --initialize-from NEW_RUN --run-id NEW_RUN_trained --steps 200000

`--head screen --scale 30` on a run of one update gives the screen head the size `make_model.spatial_init = 90`
starts it with, on that run's other weights (README Results: the probes of seeds 0, 3 and 11).

`--no-op P` instead raises the function-id head's bias for `no_op`, every weight kept, so that `no_op` has probability
P where the six functions of the map (`MiniGameSettings.functions = 'core'`) are available and the head's other outputs
are equal: an agent that starts mostly idle, so that its rare clicks are carried out whole. From a run of one update
at Reaver's head size (seed 0, 2026-12-02) it did not stay idle: A2C left `no_op` within ~40k frames for queueing a
click every step and scored 2.02 +- 1.47 at 600k frames (README Results):

    reaver train --agent a2c --steps 512 --run-id init_a2c --gin-param "make_model.spatial_init = 0.1"
    python lab/probes/reset_head.py init_a2c idle90 --no-op 0.9
    reaver train --agent a2c --steps 600000 --initialize-from idle90 --gin-param "A2C.entropy_coef = 0.001"

An agent trained without the restart queues every click (`queued` P = 1.000, a lock-in from early training); its
weights with the `queued` head reset and 200k frames of the default PPO scored 27.33 +- 2.12 and queued nothing
(README Results). The default now does this within the run (HeadRestart, Adam restarted too).
"""
import argparse, math, shutil, sys
from pathlib import Path
import numpy as np
from reaver_nb.training.checkpoint import latest_checkpoint, read_checkpoint, save_checkpoint
from reaver_nb.training.restart import head_layers
from reaver_nb.envs.sim import CORE
from reaver_nb.envs.jax_envs import make_jax_env
from reaver_nb.training.config import parse_config, RunSettings

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('run_id'); ap.add_argument('new_run_id')
ap.add_argument('--head', default='queued', help="the action head to reset (default: queued)")
ap.add_argument('--scale', type=float, default=0.0, help="multiply the head's output layer by this (default: 0, reset)")
ap.add_argument('--no-op', type=float, default=None, metavar='P',
                help="instead: raise no_op's bias so that it has probability P among the six functions")
ap.add_argument('--results-dir', default='results')
args = ap.parse_args()
if args.no_op is not None and not 0 < args.no_op < 1:
    sys.exit(f"--no-op must lie strictly between 0 and 1, got {args.no_op}.")
src, dst = Path(args.results_dir) / args.run_id, Path(args.results_dir) / args.new_run_id
ckpt = latest_checkpoint(src / 'checkpoints')
if not (src / 'config.gin').exists() or ckpt is None:
    sys.exit(f"No run {args.run_id!r} with a checkpoint in {args.results_dir}.")
if dst.exists(): sys.exit(f"{dst} exists; choose another NEW_RUN or delete it.")
raw = read_checkpoint(ckpt)
try: params = raw['state']['agent']['params']['params']
except KeyError: sys.exit(f"{ckpt} is not a fused run's checkpoint (no state/agent/params).")
if args.no_op is not None:
    parse_config(run_config=src / 'config.gin')                     # the run's function set decides where no_op sits
    slot = list(make_jax_env(RunSettings().env).function_ids).index(0)
    bias = np.array(params['logits_function_id']['bias'])
    bias[..., slot] += math.log(args.no_op / (1 - args.no_op) * (len(CORE) - 1))
    params['logits_function_id']['bias'] = bias
else:
    try: layers = head_layers(params, [args.head])
    except ValueError as e: sys.exit(str(e).replace('HeadRestart.heads', '--head'))
    for layer in layers: params[layer] = {k: np.asarray(v) * args.scale for k, v in params[layer].items()}
dst.mkdir(parents=True)
shutil.copy(src / 'config.gin', dst / 'config.gin')
step = int(ckpt.name.split('_')[1].split('.')[0])
path = save_checkpoint(dst / 'checkpoints', step, raw)
print(f"{path}: {args.run_id}'s weights at {step:,} frames with " +
      (f"no_op at probability {args.no_op} among the six functions." if args.no_op is not None else
       f"head {args.head!r} " + ("reset to uniform." if args.scale == 0 else f"scaled by {args.scale:g}.")))
