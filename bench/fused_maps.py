#!/usr/bin/env python
"""Fused training frames per second of every JAX mini-game, at several env counts, with each map's own gin config
(the agent and model `reaver train --env jax:<Map>` builds), one seed.

Each measurement: `FusedTrainer.run(carry, --updates)` once untimed (compilation), then `--repeats` timed calls, the
median reported; frames = updates x traj_len x envs. Made for a GPU (bench/gpu.sh runs it at 32 to 4096 envs); on a
CPU use small sizes:

    python bench/fused_maps.py --n-envs 32 256 1024 4096           # on a GPU
    python bench/fused_maps.py --n-envs 16 --updates 2 --repeats 1  # a CPU smoke run
"""
from __future__ import annotations
import argparse, json, statistics, time


def measure(env_id, n_envs, updates, repeats):
    import jax
    from reaver_nb.agents.actor_critic import AGENTS, ActorCriticAgent
    from reaver_nb.envs.jax_envs import make_jax_env
    from reaver_nb.training.config import RunSettings, config_files, flag_bindings, parse_config
    from reaver_nb.training.fused import FusedTrainer
    parse_config(config_files(env_id), flag_bindings(env=env_id, n_envs=n_envs))
    cfg = RunSettings()
    hp = AGENTS[cfg.agent]()
    env = make_jax_env(env_id)
    agent = ActorCriticAgent(env.obs_spec, env.act_spec, hp, n_envs, 10_000)
    tr = FusedTrainer(env, agent, n_envs, 1)
    carry = jax.block_until_ready(tr.init(0))
    t = time.perf_counter()
    carry = jax.block_until_ready(tr.run(carry, updates)[0])
    first = time.perf_counter() - t
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        carry = jax.block_until_ready(tr.run(carry, updates)[0])
        rates.append(updates * hp.traj_len * n_envs / (time.perf_counter() - t))
    return dict(agent=cfg.agent, traj_len=hp.traj_len, median=statistics.median(rates), runs=rates, first_s=first)


def main(argv=None):
    from reaver_nb.envs.sim import MINIGAMES
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--maps', nargs='+', default=list(MINIGAMES))
    ap.add_argument('--n-envs', type=int, nargs='+', default=[32, 256, 1024, 4096])
    ap.add_argument('--updates', type=int, default=20, help='updates per timed call')
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--json')
    a = ap.parse_args(argv)
    import jax
    print(f"jax {jax.__version__}, devices {jax.devices()}; {a.updates} updates per call, median of {a.repeats}", flush=True)
    out = {}
    for n in a.n_envs:        # every map at one size, then the next size: a run cut short still covers every map
        for m in a.maps:
            r = measure(f'jax:{m}', n, a.updates, a.repeats)
            out[f'{m}|{n}'] = r
            print(f"jax:{m:<27} {r['agent']} {n:>5} envs  {r['median']:>12,.0f} frames/s  (runs "
                  f"{', '.join(f'{x:,.0f}' for x in r['runs'])}; compile + first call {r['first_s']:.1f} s)", flush=True)
            if a.json:        # written after every measurement, so a time limit loses none of them
                with open(a.json, 'w') as f: json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
