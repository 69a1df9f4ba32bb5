#!/usr/bin/env python
"""Diagnostic for issue 5 (A2C does not learn jax:MoveToBeacon): train the default `reaver train` configuration on a
simulation whose beacon radius is patched (world units; the shipped simulation uses 1.0), then test 100 episodes.

    python tools/beacon_radius.py 2.0 300000              # radius, frames; runs into results/beacon_r<radius>
    python tools/beacon_radius.py 2.0 400000 --draw-only  # beacon drawn with that radius, rewarded as shipped
                                                           # (marine within 1.375 units); results/beacon_draw_r<radius>
    python tools/beacon_radius.py 2.0 --baselines         # no training: scripted and uniformly random play

`reaver test --run-id beacon_r2` in a fresh process tests such a run on the shipped simulation.
"""
import argparse, time
import numpy as np
import jax, jax.numpy as jnp
import reaver_nb.envs.minigames as mg

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('radius', type=float); ap.add_argument('frames', type=int, nargs='?')
ap.add_argument('--baselines', action='store_true', help='only score scripted and uniformly random play, 200 episodes')
ap.add_argument('--draw-only', action='store_true', help='patch only what the feature layers show, not the reward')
ap.add_argument('--seed', type=int, default=0)
args = ap.parse_args()
if (args.frames is None) != args.baselines: ap.error('give FRAMES to train, or --baselines (not both)')
reach = mg.KIND['radius'][mg.MARINE] + mg.KIND['radius'][mg.BEACON]    # the shipped reward distance
mg.KIND['radius'][mg.BEACON] = args.radius   # read when the env functions are traced, so before any training starts
if args.draw_only:
    def rules(self, u, key, extra):
        hit = jnp.linalg.norm(u.pos[0] - u.pos[1]) <= reach
        new = self.sample_points(key, 1, u.pos[:1], 5.)[0]
        return u.replace(pos=u.pos.at[1].set(jnp.where(hit, new, u.pos[1]))), hit.astype(jnp.float32), False, extra
    mg.MoveToBeacon.rules = rules

def uniform_policy(game):
    "Uniformly random among the functions the game offers now, uniformly random arguments."
    impl, res = jnp.asarray(game._impl), game.options.screen_size
    def policy(s, key):
        av = mg.available(s.units)
        ok = jnp.where(impl >= 0, av[jnp.maximum(impl, 0)], False)
        ks = jax.random.split(key, len(game.act_spec.names))
        return tuple(jax.random.choice(k, len(game.function_ids), p=ok / ok.sum()).astype(jnp.int32) if n == 'function_id'
                     else jax.random.randint(k, (), 0, res * res if n.startswith('screen') else 2)
                     for k, n in zip(ks, game.act_spec.names))
    return policy

if args.baselines:
    game = mg.MoveToBeacon()
    for name, policy in (('scripted', mg.scripted_policy(game)), ('uniformly random', uniform_policy(game))):
        sc = np.asarray(mg.play(game, policy, jax.random.PRNGKey(0), 200))
        print(f'{name}: {sc.mean():.2f} ± {sc.std():.2f} [{sc.min():.0f}, {sc.max():.0f}] over 200 episodes')
    raise SystemExit

import reaver_nb
t = time.time()
run_id = f"beacon_{'draw_' if args.draw_only else ''}r{args.radius:g}" + (f'_s{args.seed}' if args.seed else '')
reaver_nb.train('jax:MoveToBeacon', steps=args.frames, run_id=run_id, force=True, progress=False, seed=args.seed,
                gin_params=['RunSettings.log_seconds = 60'])
reaver_nb.test(run_id, episodes=100)
print(f'wall {time.time() - t:.0f} s')
