#!/usr/bin/env python
"""Diagnostic for issue 5 (A2C learning jax:MoveToBeacon): train Reaver's A2C setup (the former `reaver train`
default) on a simulation whose beacon geometry is patched, then test 100 episodes; or score scripted and random play
on it.

    python lab/probes/beacon_variants.py 300000 --draw 2 --reach 2.625   # drawn radius, reward distance (world units)
    python lab/probes/beacon_variants.py --baselines --reach 1.625       # no training: scripted and uniformly random play

As shipped the beacon is drawn with radius 1 (an estimate) and rewards when the marine's centre comes within 1.625 of
the beacon's (the map's 1.25-unit Beacon Area plus the marine's radius; nbs/18). A run goes to
results/beacon_d<draw>_r<reach>[_s<seed>]; `reaver test --run-id ID` in a fresh process tests it on the shipped
simulation.
"""
import argparse, time
import numpy as np
import jax
import reaver_nb.envs.sim as mg

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('frames', type=int, nargs='?')
ap.add_argument('--draw', type=float, default=float(mg.KIND['radius'][mg.BEACON]), help='drawn beacon radius')
ap.add_argument('--reach', type=float, default=mg.MoveToBeacon.reach, help="reward when the marine's centre is this close")
ap.add_argument('--baselines', action='store_true', help='only score scripted and uniformly random play, 200 episodes')
ap.add_argument('--seed', type=int, default=0)
args = ap.parse_args()
if (args.frames is None) != args.baselines: ap.error('give FRAMES to train, or --baselines (not both)')
mg.KIND['radius'][mg.BEACON] = args.draw   # read when the env functions are traced, so before any training starts
mg.MoveToBeacon.reach = args.reach

if args.baselines:
    game = mg.MoveToBeacon()
    for name, policy in (('scripted', mg.scripted_policy(game)), ('uniformly random', mg.random_policy(game))):
        sc = np.asarray(mg.play(game, policy, jax.random.PRNGKey(0), 200))
        print(f'{name}: {sc.mean():.2f} ± {sc.std():.2f} [{sc.min():.0f}, {sc.max():.0f}] over 200 episodes')
    raise SystemExit

import reaver_nb
t = time.time()
run_id = f"beacon_d{args.draw:g}_r{args.reach:g}" + (f'_s{args.seed}' if args.seed else '')
# Reaver's A2C setup, the jax:MoveToBeacon default when these diagnostics were run (the default is now PPO with the
# value loss kept out of the shared layers)
reaver_nb.train('jax:MoveToBeacon', 'a2c', steps=args.frames, run_id=run_id, force=True, progress=False, seed=args.seed,
                gin_params=['RunSettings.log_seconds = 60', 'make_model.value_through_trunk = True'])
reaver_nb.test(run_id, episodes=100)
print(f'wall {time.time() - t:.0f} s')
