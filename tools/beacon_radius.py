#!/usr/bin/env python
"""Diagnostic for issue 5 (A2C does not learn jax:MoveToBeacon): train the default `reaver train` configuration on a
simulation whose beacon radius is patched (world units; the shipped simulation uses 1.0), then test 100 episodes.

    python tools/beacon_radius.py 2.0 300000              # radius, frames; runs into results/beacon_r<radius>
    python tools/beacon_radius.py 2.0 400000 --draw-only  # beacon drawn with that radius, rewarded as shipped
                                                           # (marine within 1.375 units); results/beacon_draw_r<radius>

`reaver test --run-id beacon_r2` in a fresh process tests such a run on the shipped simulation.
"""
import argparse, time
import jax.numpy as jnp
import reaver_nb.envs.minigames as mg

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('radius', type=float); ap.add_argument('frames', type=int)
ap.add_argument('--draw-only', action='store_true', help='patch only what the feature layers show, not the reward')
ap.add_argument('--seed', type=int, default=0)
args = ap.parse_args()
reach = mg.KIND['radius'][mg.MARINE] + mg.KIND['radius'][mg.BEACON]    # the shipped reward distance
mg.KIND['radius'][mg.BEACON] = args.radius   # read when the env functions are traced, so before any training starts
if args.draw_only:
    def rules(self, u, key, extra):
        hit = jnp.linalg.norm(u.pos[0] - u.pos[1]) <= reach
        new = self.sample_points(key, 1, u.pos[:1], 5.)[0]
        return u.replace(pos=u.pos.at[1].set(jnp.where(hit, new, u.pos[1]))), hit.astype(jnp.float32), False, extra
    mg.MoveToBeacon.rules = rules
import reaver_nb
t = time.time()
run_id = f"beacon_{'draw_' if args.draw_only else ''}r{args.radius:g}" + (f'_s{args.seed}' if args.seed else '')
reaver_nb.train('jax:MoveToBeacon', steps=args.frames, run_id=run_id, force=True, progress=False, seed=args.seed,
                gin_params=['RunSettings.log_seconds = 60'])
reaver_nb.test(run_id, episodes=100)
print(f'wall {time.time() - t:.0f} s')
