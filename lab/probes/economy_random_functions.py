#!/usr/bin/env python
"""Issue 30: does uniform random play on CollectMineralsAndGas score more here (61.3) than SC2LE's random policy (12, a
third party's copy of Table 1) because it picks among fewer functions?

SC2LE's random agent picked among every function the game offered; ours picks among the offered ones of the map's set
(`SC2Settings.functions`: Reaver's 'minigames', 23 ids, for this map). Putting an idle SCV to work takes two of them in a
row (`select_idle_worker` or a selection, then a right click or `Harvest_Gather` on a field), so every extra offered
function makes that pair rarer. This probe plays the same random episodes with the map's set, with 'minigames_all'
(41 ids) and with 'all' (every pysc2 id: only those the simulation implements can be offered, so this is still fewer
than the game offers), and prints how many functions one episode offered at its start and after 50 random steps. Nothing in the package changes.

    python lab/probes/economy_random_functions.py [--episodes 100]
"""
import argparse, time
import numpy as np, jax, jax.numpy as jnp
from reaver_nb.envs.sim import CollectMineralsAndGas, play, random_policy

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('--episodes', type=int, default=100)
args = ap.parse_args()
for functions in ('minigames', 'minigames_all', 'all'):
    g, t = CollectMineralsAndGas(functions=functions), time.time()
    s = np.asarray(play(g, random_policy(g), jax.random.PRNGKey(0), args.episodes))
    # functions offered at the start and after 50 random steps of one episode
    pol, (obs, st) = random_policy(g), g.reset(jax.random.PRNGKey(1))
    offered = [int(np.asarray(g.offered(st)).sum())]
    step = jax.jit(g.step)
    for k in range(50):
        obs, st, *_ = step(jax.random.PRNGKey(100 + k), st, pol(st, jax.random.PRNGKey(200 + k)))
    offered.append(int(np.asarray(g.offered(st)).sum()))
    print(f"functions={functions!r} ({len(g.function_ids)} ids): random play {s.mean():.1f} ± {s.std():.1f} "
          f"[{s.min():g}, {s.max():g}], {(s > 0).mean():.0%} of episodes score; offered at the start / after 50 "
          f"steps: {offered[0]} / {offered[1]} ({args.episodes} episodes, {time.time() - t:.0f} s)", flush=True)
