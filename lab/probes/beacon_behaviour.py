#!/usr/bin/env python
"""Diagnostic for issue 5: where does a trained jax:MoveToBeacon agent lose time?

Plays 100 episodes of a run's latest checkpoint, or of `--checkpoint FILE` (fused path, seed 0), and prints how often each function is called,
how often its screen orders (`Move_screen`, `Attack_screen`, `Patrol_screen`, `Smart_screen`) are queued, how far clicks land from the beacon, and how many agent steps
each beacon takes (scripted play, which walks straight to each beacon: 27.5 per episode, about 8.7 steps a beacon).

    python lab/probes/beacon_behaviour.py RUN_ID [--results-dir results] [--checkpoint FILE] [--greedy] [--queued-now]

`--queued-now` plays the same weights with every order given now (`queued = 0`): the score the agent would reach
without its queueing habit.
"""
import argparse, sys
from pathlib import Path
import numpy as np
import jax, jax.numpy as jnp
import reaver_nb.envs.sim as mg
from reaver_nb.envs.sc2 import pysc2_interface
from reaver_nb.training.evaluate import load_run

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('run_id'); ap.add_argument('--results-dir', default='results')
ap.add_argument('--greedy', action='store_true', help='the most likely action instead of a sample')
ap.add_argument('--queued-now', action='store_true', help='give every order now (queued = 0)')
ap.add_argument('--checkpoint', help="one of the run's checkpoint files (default: its latest)")
args = ap.parse_args()
if args.checkpoint and not Path(args.checkpoint).is_file(): sys.exit(f"No checkpoint file {args.checkpoint!r}.")
try: trained = load_run(args.run_id, args.results_dir, args.checkpoint)   # the weights alone: older runs still load
except (FileNotFoundError, ValueError) as e: sys.exit(str(e))
cfg, ckpt, frames = trained.cfg, trained.checkpoint, trained.frames
if cfg.env != 'jax:MoveToBeacon' or not cfg.fused:
    sys.exit(f"This diagnostic reads fused jax:MoveToBeacon runs; {args.run_id!r} trained {cfg.env!r}.")
env, agent, params = trained.env, trained.agent, trained.params[0]
res, names = env.options.screen_size, env.act_spec.names
FN, SCREEN, QUEUED = (names.index(n) for n in ('function_id', 'screen', 'queued'))
CLICKS = (12, 331, 333, 451)   # Attack_screen, Move_screen, Patrol_screen, Smart_screen
clicks = [env.function_ids.index(f) for f in CLICKS if f in env.function_ids]
NAMES = pysc2_interface()['names']

def episode(key):
    k0, key = jax.random.split(key)
    obs, st = env.reset(k0)
    def body(carry, k):
        obs, st = carry
        k1, k2 = jax.random.split(k)
        batch = jax.tree.map(lambda x: x[None], obs)
        a = agent._greedy(params, batch) if args.greedy else agent._act(params, batch, k1)[0]
        a = tuple(jnp.zeros_like(x[0]) if i == QUEUED and args.queued_now else x[0] for i, x in enumerate(a))
        err = jnp.linalg.norm(mg.screen_point(a[SCREEN], res) - st.units.pos[1])
        obs, st, r, _, _ = env.step(k2, st, a)
        return (obs, st), dict(fn=a[FN], queued=a[QUEUED], err=err, r=r)
    return jax.lax.scan(body, (obs, st), jax.random.split(key, env.max_steps))[1]

out = jax.device_get(jax.jit(jax.vmap(episode))(jax.random.split(jax.random.PRNGKey(1), 100)))
fn, r, ret = out['fn'], out['r'], out['r'].sum(1)
print(f"{args.run_id} at {frames:,} frames, {'greedy' if args.greedy else 'sampled'}"
      f"{', every order now' if args.queued_now else ''}: {ret.mean():.2f} ± {ret.std():.2f} over 100 episodes")
ids, counts = np.unique(fn, return_counts=True)
print('functions called:', ', '.join(f'{NAMES.get(env.function_ids[int(i)], env.function_ids[int(i)])} {c / fn.size:.3f}' for i, c in zip(ids, counts)))
click = np.isin(fn, clicks)
if click.any():
    print(f"screen orders: {click.mean():.3f} of steps, queued {out['queued'][click].mean():.3f}; "
          f"distance from the beacon: median {np.median(out['err'][click]):.2f}, 90th percentile "
          f"{np.percentile(out['err'][click], 90):.2f}; within reach ({mg.MoveToBeacon.reach}): "
          f"{(out['err'][click] <= mg.MoveToBeacon.reach).mean():.3f}")
hits = [np.flatnonzero(e > 0) for e in r]
first = [h[0] for h in hits if len(h)]
gaps = np.concatenate([np.diff(h) for h in hits if len(h) > 1] or [np.zeros(0)])
if first: print(f"steps to the first beacon: mean {np.mean(first):.2f} ({len(first)} of 100 episodes scored)")
if gaps.size: print(f"steps between beacons: mean {gaps.mean():.2f}, median {np.median(gaps):.0f}, "
                    f"90th percentile {np.percentile(gaps, 90):.0f}")
