#!/usr/bin/env python
"""pysc2's scripted MoveToBeacon agent (unchanged, through pysc2's `run_loop`) on the drop-in under named
simulation settings: the check a rendering setting must pass before it can become a default (the real game: 25.87 +-
1.91 over 1000 episodes at 16x16).

    python lab/sc2rl_oracle/scripted_check.py --episodes 10 --res 16 \
        --variant default --variant pixel_footprint=true --variant beacon_on_top=true \
        --variant pixel_footprint=true,beacon_on_top=true \
        --variant click_to_centre=true,pixel_footprint=true,beacon_on_top=true \
        --variant point-selects-beacon@pixel_footprint=true,beacon_on_top=true     # a fast-judge probe on a variant
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def play(sim_kw: dict, episodes: int, seed: int, res: int, map_name='MoveToBeacon', probe: str | None = None):
    from reaver_nb.envs import pysc2_env as sc2_env
    from reaver_nb.envs.sim import MiniGameOptions
    from pysc2.agents import scripted_agent
    from pysc2.env import run_loop
    env = sc2_env.SC2Env(map_name=map_name, players=[sc2_env.Agent(sc2_env.Race.terran)], random_seed=seed,
                         agent_interface_format=sc2_env.parse_agent_interface_format(feature_screen=res, feature_minimap=res),
                         sim=MiniGameOptions(**sim_kw))
    if probe:   # a fast-judge probe (never a default): a Program of its own whose game is the probe's class
        import fast_judge
        prog = sc2_env.Program(map_name, res, res, env._step_mul, env._sim)
        prog.game = fast_judge.PROBES[probe][0](prog.game.options, prog.game.sim_options)
        env._program = prog
    run_loop.run_loop([scripted_agent.MoveToBeacon()], env, max_episodes=episodes)
    return list(map(float, env.episode_scores))


def parse(v: str) -> dict:
    "`default`, `field=value,...` or `PROBE@field=value,...` / `PROBE@default` (a fast-judge probe)."
    out = {}
    if '@' in v:
        out['probe'], v = v.split('@', 1)
    if v == 'default': return out
    for kv in v.split(','):
        k, x = kv.split('=')
        out[k] = x.lower() in ('1', 'true', 'yes')
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--episodes', type=int, default=10); ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--res', type=int, nargs='*', default=[16]); ap.add_argument('--variant', action='append')
    ap.add_argument('--json')
    a = ap.parse_args(argv)
    rows = []
    for res in a.res:
        for v in a.variant or ['default']:
            t0 = time.time()
            kw = parse(v); probe = kw.pop('probe', None)
            s = play(kw, a.episodes, a.seed, res, probe=probe)
            rows.append(dict(res=res, variant=v, scores=s, mean=float(np.mean(s)), std=float(np.std(s)), wall_s=round(time.time() - t0)))
            print(f'{res}x{res} {v:45s} {np.mean(s):6.2f} +- {np.std(s):5.2f}  {s}', flush=True)
    if a.json: open(a.json, 'w').write(json.dumps(rows, indent=1))
    return rows


if __name__ == '__main__':
    main()
