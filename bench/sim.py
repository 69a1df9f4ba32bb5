#!/usr/bin/env python
"""Env steps per second of the JAX mini-games under a random policy, against JaxMARL's SMAX (the JAX StarCraft-like
simulator to beat), in one run on one machine.

Each measurement is one jitted `lax.scan` of `--steps` env steps over N envs (`vmap`), both sides written the same way:
a uniformly random action among those available (ours: `sim.random_policy`, a function the game offers now and
random arguments; SMAX: a random available action per agent), the env step with its observations computed (ours: the
pysc2 feature layers, 16x16 screen and minimap, Reaver's layers; SMAX: every agent's observation vector), and the
automatic reset of finished envs (ours: `fused.vec_step`, as training runs it; SMAX: `MultiAgentEnv.step`, which resets
every step and selects). One env step is one agent decision of the whole team (ours: 8 game loops; SMAX: 8 world
steps, its default). The first two calls compile and are not timed; the table shows the median of `--repeats` timed calls.

SMAX runs as `HeuristicEnemySMAX` (the allies random, the enemies its built-in heuristic, as JaxMARL trains SMAX),
scenarios 3m and 27m_vs_30m by default; `--smax` takes any of JaxMARL's (10m_vs_11m, 25m: peers with about as many units
as our larger maps). The table lists each peer's unit rows: our maps' tables hold 2-245, SMAX 3m 6.

    python bench/sim.py                                  # 16, 256, 1024 envs; all our maps, SMAX 3m and 27m_vs_30m
    python bench/sim.py --n-envs 16 256 --repeats 3
    python bench/sim.py --quick                          # a smoke run (seconds), numbers not meaningful

JaxMARL is a benchmark dependency: pip install -e ".[bench]" (jaxmarl 0.2.0 installs beside jax 0.10). See bench/README.md.
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, sys, time
from importlib import metadata

SMAX_MAPS = ('3m', '27m_vs_30m')
GOAL = 1.0   # ours / SMAX 3m, env steps per second at equal N


def version(dist):
    try: return metadata.version(dist)
    except metadata.PackageNotFoundError: return 'not installed'


def ours(name):
    "(reset(key, n) -> carry, step(carry, key) -> carry) for a JAX mini-game of reaver_nb, random play."
    import jax
    from reaver_nb.envs.sim import MINIGAMES, random_policy
    from reaver_nb.training.fused import vec_reset, vec_step
    game = MINIGAMES[name]()
    policy = jax.vmap(random_policy(game))
    def reset(key, n): return vec_reset(game, key, n)
    def step(vs, key):
        k1, k2 = jax.random.split(key)
        act = policy(vs.env, jax.random.split(k1, vs.ret.shape[0]))
        return vec_step(game, k2, vs, act)[0]
    return reset, step


def smax(map_name):
    "The same for JaxMARL's SMAX (HeuristicEnemySMAX) on `map_name`."
    import jax, jax.numpy as jnp
    from jaxmarl import make
    from jaxmarl.environments.smax import map_name_to_scenario
    env = make('HeuristicEnemySMAX', scenario=map_name_to_scenario(map_name))
    def reset(key, n):
        return jax.vmap(env.reset)(jax.random.split(key, n))[1]
    def one(state, key):
        avail = env.get_avail_actions(state)
        ks = jax.random.split(key, len(env.agents) + 1)
        acts = {a: jax.random.categorical(k, jnp.where(avail[a] > 0, 0., -jnp.inf)) for a, k in zip(env.agents, ks[1:])}
        return env.step(ks[0], state, acts)[1]
    def step(states, key):
        n = jax.tree.leaves(states)[0].shape[0]
        return jax.vmap(one)(states, jax.random.split(key, n))
    return reset, step


def units(label, arg):
    "How many unit rows a peer's state holds (ours: the game's unit table; SMAX: allies + enemies)."
    import jax
    if label.startswith('SMAX'):
        from jaxmarl.environments.smax import map_name_to_scenario
        sc = map_name_to_scenario(arg)
        return sc.num_allies + sc.num_enemies
    from reaver_nb.envs.sim import MINIGAMES
    game = MINIGAMES[arg]()
    return jax.eval_shape(lambda k: game.reset(k)[1].units, jax.random.PRNGKey(0)).kind.shape[0]


def measure(make, n, steps, repeats):
    "Median env steps/s of `repeats` timed calls (after two untimed ones, which compile), every rate, the untimed seconds."
    import jax
    reset, step = make
    @jax.jit
    def run(carry, key):
        carry, _ = jax.lax.scan(lambda c, k: (step(c, k), None), carry, jax.random.split(key, steps))
        return carry
    carry = jax.jit(reset, static_argnums=1)(jax.random.PRNGKey(0), n)
    t = time.perf_counter()
    for k in (1, 2):   # two untimed calls: the first output's types (weak types, dtypes) can differ from the input's
        carry = jax.block_until_ready(run(carry, jax.random.PRNGKey(k)))
    first = time.perf_counter() - t
    rates = []
    for i in range(repeats):
        t = time.perf_counter()
        carry = jax.block_until_ready(run(carry, jax.random.PRNGKey(3 + i)))
        rates.append(n * steps / (time.perf_counter() - t))
    return statistics.median(rates), rates, first


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--n-envs', type=int, nargs='+', default=[16, 256, 1024])
    ap.add_argument('--steps', type=int, default=64, help='env steps per timed call (default 64)')
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--maps', nargs='+', default=None, help='our maps (default: all seven JAX mini-games)')
    ap.add_argument('--smax', nargs='*', default=list(SMAX_MAPS), help='SMAX scenarios (default 3m 27m_vs_30m)')
    ap.add_argument('--quick', action='store_true', help='16 envs, 8 steps, 1 repeat: a smoke run')
    ap.add_argument('--json', help='also write the results to this file')
    a = ap.parse_args(argv)
    if a.quick: a.n_envs, a.steps, a.repeats = [16], 8, 1
    import jax
    from reaver_nb.envs.sim import MINIGAMES
    maps = a.maps or list(MINIGAMES)
    unknown = [m for m in maps if m not in MINIGAMES]
    if unknown: sys.exit(f"unknown map(s) {unknown}; choose from {list(MINIGAMES)}")
    try:
        import jaxmarl  # noqa: F401
    except ImportError:
        print('jaxmarl is not installed: SMAX skipped (pip install -e ".[bench]", or pip install jaxmarl==0.2.0)')
        a.smax = []
    print(f"python {platform.python_version()}, jax {jax.__version__} ({jax.default_backend()}), jaxmarl "
          f"{version('jaxmarl')}, reaver_nb {version('reaver_nb')}; {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.2f}; {a.steps} steps per call, median of {a.repeats}", flush=True)
    peers = [(f'jax:{m}', ours, m) for m in maps] + [(f'SMAX {m}', smax, m) for m in a.smax]
    results = {}
    for label, build, arg in peers:
        for n in a.n_envs:
            med, rates, first = measure(build(arg), n, a.steps, a.repeats)
            results[(label, n)] = med
            print(f"{label:<32} {n:>5} envs  {med:>12,.0f} steps/s  (runs: {', '.join(f'{r:,.0f}' for r in rates)}; "
                  f"compile + two first calls {first:.1f} s)", flush=True)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(dict(n_envs=a.n_envs, steps=a.steps, repeats=a.repeats, jax=jax.__version__,
                           backend=jax.default_backend(), load=os.getloadavg()[0],
                           steps_per_s={f'{l}|{n}': v for (l, n), v in results.items()}), f, indent=1)
    print()
    head = f"{'env':<32}{'units':>6}" + ''.join(f"{str(n) + ' envs':>14}" for n in a.n_envs)
    print(head); print('-' * len(head))
    for label, _, arg in peers:
        print(f"{label:<32}{units(label, arg):>6}" + ''.join(f"{results[(label, n)]:>14,.0f}" for n in a.n_envs))
    for ref in [f'SMAX {m}' for m in a.smax]:
        print(f"\nratio to {ref} (env steps/s at equal N; goal >= {GOAL:g}x against SMAX 3m)")
        for label, *_ in peers:
            if label.startswith('SMAX'): continue
            print(f"{label:<32}" + ''.join(f"{results[(label, n)] / results[(ref, n)]:>13.2f}x" for n in a.n_envs))


if __name__ == '__main__':
    main()
