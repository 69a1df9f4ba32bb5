#!/usr/bin/env python
"""pysc2's own agents (its feature-layer `scripted_agent` classes and `random_agent.RandomAgent`), unchanged, through
`pysc2.env.run_loop` on reaver_nb's drop-in `SC2Env` (the JAX mini-games): episode scores per map, next to the real
game's where a number is known. The table in nbs/26_pysc2_agent.ipynb comes from

    python tools/pysc2_agents.py --episodes 100            # 16 x 16, step_mul 8, seed 0; a markdown table
    python tools/pysc2_agents.py --episodes 10 --maps MoveToBeacon DefeatRoaches --json scores.json
"""
import argparse, json, time
import numpy as np
from reaver_nb.envs import pysc2_env as sc2_env   # first: it makes pysc2 import on modern Python
from pysc2.agents import random_agent, scripted_agent
from pysc2.env import run_loop
from absl import logging

# the real game's numbers where one is known: (mean, std or None, source)
REAL = {('MoveToBeacon', 'MoveToBeacon'): (25.87, 1.91, "pysc2's scripted agent, 1000 real episodes at 16 x 16 (issue 51)"),
        ('MoveToBeacon', 'RandomAgent'): (1, None, 'SC2LE Table 1, random policy'),
        ('CollectMineralShards', 'RandomAgent'): (17, None, 'SC2LE Table 1, random policy'),
        ('DefeatRoaches', 'RandomAgent'): (1, None, 'SC2LE Table 1, random policy'),
        ('DefeatZerglingsAndBanelings', 'RandomAgent'): (23, None, 'SC2LE Table 1, random policy'),
        ('FindAndDefeatZerglings', 'RandomAgent'): (4, None, "SC2LE Table 1, random policy (a third party's copy)"),
        ('CollectMineralsAndGas', 'RandomAgent'): (12, None, "SC2LE Table 1, random policy (a third party's copy)"),
        ('BuildMarines', 'RandomAgent'): (None, None, "SC2LE Table 1 gives '<1' (not a number)")}

AGENTS = [('MoveToBeacon', scripted_agent.MoveToBeacon, False),
          ('CollectMineralShards', scripted_agent.CollectMineralShards, False),
          ('CollectMineralShards', scripted_agent.CollectMineralShardsFeatureUnits, True),
          ('DefeatRoaches', scripted_agent.DefeatRoaches, False)] + \
         [(m, random_agent.RandomAgent, False) for m in sc2_env.MINIGAMES]


def play(map_name, agent_cls, feature_units, episodes, seed, screen):
    env = sc2_env.SC2Env(map_name=map_name, players=[sc2_env.Agent(sc2_env.Race.terran)], random_seed=seed,
                         agent_interface_format=sc2_env.parse_agent_interface_format(
                             feature_screen=screen, feature_minimap=screen, use_feature_units=feature_units))
    np.random.seed(seed)   # RandomAgent draws from numpy's global generator
    run_loop.run_loop([agent_cls()], env, max_episodes=episodes)
    return env.episode_scores


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--episodes', type=int, default=100)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--screen', type=int, default=16, help='feature screen and minimap resolution')
    ap.add_argument('--maps', nargs='*', default=None, help='only these maps')
    ap.add_argument('--json', default=None, help='also write the scores here')
    a = ap.parse_args()
    logging.set_verbosity(logging.WARNING)
    rows = []
    print('| map | agent | drop-in: mean ± std (%d episodes) | real game | source |\n|---|---|---|---|---|' % a.episodes)
    for m, cls, fu in AGENTS:
        if a.maps and m not in a.maps: continue
        t = time.time()
        s = np.array(play(m, cls, fu, a.episodes, a.seed, a.screen))
        real, sd, src = REAL.get((m, cls.__name__), (None, None, '—'))
        real_txt = '—' if real is None else f"{real}" + (f" ± {sd}" if sd is not None else '')
        print(f"| {m} | {cls.__name__} | {s.mean():.2f} ± {s.std():.2f} | {real_txt} | {src} |", flush=True)
        rows.append(dict(map=m, agent=cls.__name__, scores=s.tolist(), mean=float(s.mean()), std=float(s.std()),
                         real=real, real_std=sd, source=src, seconds=round(time.time() - t, 1)))
    if a.json: open(a.json, 'w').write(json.dumps(rows, indent=1))


if __name__ == '__main__':
    main()
