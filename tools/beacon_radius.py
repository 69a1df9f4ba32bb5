#!/usr/bin/env python
"""Diagnostic for issue 5 (A2C does not learn jax:MoveToBeacon): train the default `reaver train` configuration on a
simulation whose beacon radius is patched (world units; the shipped simulation uses 1.0), then test 100 episodes.

    python tools/beacon_radius.py 2.0 300000      # radius, frames; runs into results/beacon_r<radius>
"""
import sys, time
import reaver_nb.envs.minigames as mg

radius, frames = float(sys.argv[1]), int(sys.argv[2])
mg.KIND['radius'][mg.BEACON] = radius   # read when the env functions are traced, so before any training starts
import reaver_nb
t = time.time()
run_id = f'beacon_r{radius:g}'
reaver_nb.train('jax:MoveToBeacon', steps=frames, run_id=run_id, force=True, progress=False,
                gin_params=['RunSettings.log_seconds = 60'])
reaver_nb.test(run_id, episodes=100)
print(f'wall {time.time() - t:.0f} s')
