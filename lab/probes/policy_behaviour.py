#!/usr/bin/env python
"""What a trained agent on any JAX mini-game does: which functions it calls, in its high- and low-scoring episodes.

Plays N episodes (default 50, sampled actions, seed 1) of a run's latest checkpoint (or `--checkpoint FILE`; seed 0 of
a multi-seed run), splits them at the median return, and prints for each half its mean return and the share of each
function called, with how often its orders are queued. Written for issue 30 (why CollectMineralsAndGas' seed 1 scores
near zero in some episodes and near seed 0's level in others); `beacon_behaviour.py` is MoveToBeacon's own.

    python lab/probes/policy_behaviour.py RUN_ID [--results-dir results] [--episodes 50] [--checkpoint FILE] [--greedy]
"""
import argparse, sys
from pathlib import Path
import numpy as np
import jax, jax.numpy as jnp
from reaver_nb.envs.sc2 import pysc2_interface
from reaver_nb.training.evaluate import load_run

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('run_id'); ap.add_argument('--results-dir', default='results')
ap.add_argument('--episodes', type=int, default=50)
ap.add_argument('--greedy', action='store_true', help='the most likely action instead of a sample')
ap.add_argument('--checkpoint', help="one of the run's checkpoint files (default: its latest)")
args = ap.parse_args()
if args.checkpoint and not Path(args.checkpoint).is_file(): sys.exit(f"No checkpoint file {args.checkpoint!r}.")
try: trained = load_run(args.run_id, args.results_dir, args.checkpoint)
except (FileNotFoundError, ValueError) as e: sys.exit(str(e))
if trained.env is None or not hasattr(trained.env, 'function_ids'):
    sys.exit(f"This probe reads runs on a JAX mini-game; {args.run_id!r} trained {trained.cfg.env!r}.")
env, agent, params = trained.env, trained.agent, trained.params[0]
names = env.act_spec.names
FN, QUEUED = names.index('function_id'), names.index('queued')
NAMES = pysc2_interface()['names']

def episode(key):
    k0, key = jax.random.split(key)
    obs, st = env.reset(k0)
    def body(carry, k):
        obs, st, over = carry
        k1, k2 = jax.random.split(k)
        batch = jax.tree.map(lambda x: x[None], obs)
        a = agent._greedy(params, batch) if args.greedy else agent._act(params, batch, k1)[0]
        a = tuple(x[0] for x in a)
        obs2, st2, r, te, tr = env.step(k2, st, a)
        out = dict(fn=a[FN], queued=a[QUEUED], r=jnp.where(over, 0., r), live=~over)
        return (obs2, st2, over | te | tr), out
    return jax.lax.scan(body, (obs, st, jnp.zeros((), bool)), jax.random.split(key, env.max_steps))[1]

out = jax.device_get(jax.jit(jax.vmap(episode))(jax.random.split(jax.random.PRNGKey(1), args.episodes)))
ret = out['r'].sum(1)
print(f"{args.run_id} ({trained.cfg.env}) at {trained.frames:,} frames, {'greedy' if args.greedy else 'sampled'}: "
      f"{ret.mean():.2f} ± {ret.std():.2f} over {args.episodes} episodes; returns {np.sort(ret).astype(int).tolist()}")
med = np.median(ret)
for label, rows in (('low', ret <= med), ('high', ret > med)):
    if not rows.any(): continue
    fn, live, q = out['fn'][rows], out['live'][rows], out['queued'][rows]
    ids, counts = np.unique(fn[live], return_counts=True)
    share = sorted(zip(counts / live.sum(), ids), reverse=True)
    print(f"{label} half ({rows.sum()} episodes, return {ret[rows].mean():.2f}): " + ', '.join(
        f"{NAMES.get(env.function_ids[int(i)], env.function_ids[int(i)])} {s:.3f}"
        f"{f' (queued {q[live & (fn == i)].mean():.2f})' if s > 0.01 else ''}" for s, i in share if s >= 0.005))
