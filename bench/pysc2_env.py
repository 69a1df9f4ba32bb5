#!/usr/bin/env python
"""Agent steps per second of the pysc2 drop-in (`reaver_nb.envs.pysc2_env.SC2Env`, one env, one agent, through
`pysc2.env.run_loop`) next to `reaver test`'s batched path (`training.fused.evaluate`: the episodes side by side in
one compiled program), in one run on one machine, with the same trained run.

Rows (MoveToBeacon, 16 x 16, step_mul 8 unless the run says otherwise):
- drop-in + Pysc2Agent: the run as a pysc2 agent on the drop-in (the policy's forward pass on the host, one step at
  a time: what a pysc2 user of the simulation gets);
- drop-in + pysc2 RandomAgent: the env alone, nearly (pysc2's random agent costs microseconds);
- reaver test, batched: `fused.evaluate` of the same run, `--batch` episodes at once (`reaver test`'s default is 100).
A step is one agent decision (8 game loops). The first episode of each drop-in row and the first call of the batched
row compile and are not timed; each row is the median of `--repeats` timed runs.

    python bench/pysc2_env.py                             # trains a tiny PPO run first (speed does not need a good one)
    python bench/pysc2_env.py --run mtb_ppo51 --results-dir RESULTS --episodes 5 --batch 100
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, tempfile, time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--run', default=None, help='a run trained on a JAX mini-game (default: train a tiny PPO run)')
    ap.add_argument('--results-dir', default=None)
    ap.add_argument('--episodes', type=int, default=3, help='timed episodes per drop-in row')
    ap.add_argument('--batch', type=int, default=100, help="episodes of the batched row (reaver test's default)")
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--json', default=None)
    a = ap.parse_args()

    from reaver_nb.envs import pysc2_env as sc2_env
    from reaver_nb.pysc2_agent import Pysc2Agent
    from pysc2.agents import random_agent
    from pysc2.env import run_loop
    from absl import logging
    import jax, numpy as np
    logging.set_verbosity(logging.WARNING)
    if a.run is None:
        import reaver_nb
        a.results_dir = tempfile.mkdtemp()
        reaver_nb.train('jax:MoveToBeacon', 'ppo', steps=2048, seed=0, run_id='bench', results_dir=a.results_dir, verbose=False)
        a.run = 'bench'
    agent = Pysc2Agent(a.run, results_dir=a.results_dir or 'results', seed=0)
    o = agent.options
    env = sc2_env.SC2Env(map_name=agent.map_name, players=[sc2_env.Agent(sc2_env.Race.terran)], random_seed=0,
                         step_mul=o['step_mul'], agent_interface_format=sc2_env.parse_agent_interface_format(
                             feature_screen=o['screen_size'], feature_minimap=o['minimap_size']))

    def drop_in(ag):
        run_loop.run_loop([ag], env, max_episodes=1)   # compiles (program and policy), not timed
        rates = []
        for _ in range(a.repeats):
            steps0, t = ag.steps, time.perf_counter()
            run_loop.run_loop([ag], env, max_episodes=a.episodes)
            rates.append((ag.steps - steps0) / (time.perf_counter() - t))
        return statistics.median(rates)

    from reaver_nb.training.fused import evaluate
    run = agent.trained
    def batched():
        go = lambda k: jax.block_until_ready(evaluate(run.env, run.agent, run.params[0], jax.random.PRNGKey(k), a.batch))
        go(0)
        rates = []
        for k in range(a.repeats):
            t = time.perf_counter(); go(k + 1)
            rates.append(a.batch * run.env.max_steps / (time.perf_counter() - t))
        return statistics.median(rates)

    rows = {'drop-in + Pysc2Agent (1 env)': drop_in(agent),
            'drop-in + pysc2 RandomAgent (1 env)': drop_in(random_agent.RandomAgent()),
            f'reaver test, batched ({a.batch} episodes)': batched()}
    ref = rows['drop-in + Pysc2Agent (1 env)']
    print(f"{agent.map_name}, {o['screen_size']} x {o['screen_size']}, step_mul {o['step_mul']}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, jax {jax.__version__} ({jax.default_backend()})")
    print(f"{'':44s} {'steps/s':>10s} {'x drop-in + Pysc2Agent':>24s}")
    for k, v in rows.items(): print(f"{k:44s} {v:10.0f} {v / ref:24.2f}")
    if a.json: open(a.json, 'w').write(json.dumps(dict(rows=rows, map=agent.map_name, options=o, date=time.strftime('%F %T')), indent=1))


if __name__ == '__main__':
    main()
