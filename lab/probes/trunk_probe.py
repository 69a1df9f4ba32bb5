#!/usr/bin/env python
"""Diagnostic for issue 5: does a jax:MoveToBeacon run's network still look at its input?

For the initial parameters and each kept checkpoint of a run (fused path: seed 0; host or Ray path: its agent), on 512 fresh episode starts:
- `live`: the fraction of positive ReLU outputs of each convolution and of the 256-unit layer (dying ReLUs);
- `screen H`: the entropy of the `screen` argument head (log 256 = 5.545 is uniform) and `P(reach)`: its probability
  mass on pixels whose click reaches the beacon, against a uniform head's;
- `fn sd`: how much the function-id logits vary across states (0: the head ignores its input), `V sd` the same for
  the value; `P(queued)`: the `queued` head's mean probability of queueing an order behind the current one.

    python lab/probes/trunk_probe.py RUN_ID [--results-dir results] [--draw R] [--reach D]

`--draw` and `--reach` probe runs of `lab/probes/beacon_variants.py` (drawn beacon radius and reward distance patched).
"""
import argparse, sys
from pathlib import Path
import jax, jax.numpy as jnp
import reaver_nb.envs.sim as mg
from reaver_nb.training.config import parse_config, RunSettings
from reaver_nb.envs.jax_envs import make_jax_env
from reaver_nb.agents.actor_critic import ActorCriticAgent, AGENTS
from reaver_nb.training.fused import FusedTrainer
import numpy as np
from reaver_nb.training.checkpoint import list_checkpoints, load_checkpoint_part

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('run_id'); ap.add_argument('--results-dir', default='results')
ap.add_argument('--draw', type=float, default=None, help="the run's patched drawn beacon radius (world units)")
ap.add_argument('--reach', type=float, default=None, help="the run's patched reward distance (world units)")
args = ap.parse_args()
if args.draw is not None: mg.KIND['radius'][mg.BEACON] = args.draw   # before any env is traced
if args.reach is not None: mg.MoveToBeacon.reach = args.reach
run = Path(args.results_dir) / args.run_id
if not (run / 'config.gin').exists(): sys.exit(f"No run {args.run_id!r} in {args.results_dir} (no config.gin).")
parse_config(run_config=run / 'config.gin'); cfg = RunSettings()
if cfg.env != 'jax:MoveToBeacon' or not cfg.fused:
    sys.exit(f"This probe reads fused jax:MoveToBeacon runs; {args.run_id!r} trained {cfg.env!r}.")
env = make_jax_env(cfg.env)
agent = ActorCriticAgent(env.obs_spec, env.act_spec, AGENTS[cfg.agent](), cfg.n_envs, 1)
trainer = FusedTrainer(env, agent, cfg.n_envs, cfg.n_seeds)

res = env.options.screen_size
obs, s0 = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(7), 512))
selected = s0.replace(units=s0.units.replace(selected=s0.units.selected.at[:, 0].set(True)))
obs = jax.vmap(env.observe)(selected)                 # marine selected: Move_screen and Attack_screen available
px = jnp.stack(jnp.meshgrid(jnp.arange(res), jnp.arange(res), indexing='xy'), -1).reshape(-1, 2)
centres = (px + 0.5) * mg.SCREEN_UNITS / res
reach = mg.MoveToBeacon.reach
reaches = jnp.linalg.norm(centres[None] - s0.units.pos[:, 1][:, None], axis=-1) <= reach
screen, queued = env.act_spec.names.index('screen'), env.act_spec.names.index('queued')

def report(tag, params):
    (dists, v), st = agent.model.apply(params, obs, capture_intermediates=True, mutable=['intermediates'])
    live = []
    for path, x in jax.tree_util.tree_flatten_with_path(st['intermediates'])[0]:
        name = '/'.join(str(getattr(k, 'key', getattr(k, 'idx', k))) for k in path)
        if name.endswith('__call__/0') and ('Conv_' in name or name.startswith('fc')):
            live.append(f"{name.split('/__call__')[0]} {float(jnp.mean(x > 0)):.2f}")
    sp = jax.nn.softmax(dists[screen])
    h = float(-(sp * jnp.log(sp + 1e-12)).sum(-1).mean())
    fn = jnp.where(dists[0] > -1e8, dists[0], 0.)
    print(f"{tag:>16}: live {', '.join(live)} | screen H {h:.3f}, P(reach) {float((sp * reaches).sum(-1).mean()):.4f} "
          f"(uniform {float(reaches.mean()):.4f}) | fn sd {float(fn.std(0).mean()):.4f} | V sd {float(v.std()):.4f} | "
          f"P(queued) {float(jax.nn.softmax(dists[queued])[:, 1].mean()):.3f}")

report('init', jax.tree.map(lambda x: x[0], trainer.init(cfg.seed).agent.params))
target = trainer.init(0).agent.params
one = jax.tree.map(lambda x: x[0], target)
for ck in list_checkpoints(run / 'checkpoints'):   # the weights alone: runs of older simulation versions still load
    try: params = jax.tree.map(lambda x: x[0], load_checkpoint_part(ck, target, 'state', 'agent', 'params'))
    except ValueError: params = load_checkpoint_part(ck, one, 'state', 'params')   # a host or Ray run: one agent
    report(f"{int(load_checkpoint_part(ck, np.int64(0), 'frames')):,} frames", params)
