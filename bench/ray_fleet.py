"""Ray fleet scaling: env steps/s that `--backend ray` actors hand to the learner, for 1, 2 and 4 actors, against the
local path (one process stepping the same envs with the same policy: `RolloutActor` without Ray), one run, same machine.

Two envs stand in for a StarCraft II game:
  cost10ms   an env whose step costs 10 ms (`--cost busy`: of CPU, as a game burns a core; `--cost sleep`: waiting,
             as on a machine with a core to spare per game), 4 floats in, 2 actions, episodes of 100 steps;
  mock-sc2   pysc2's mock game (`pysc2.env.mock_sc2_env`) behind reaver_nb's SC2Env adapter: the real observation
             pipeline (feature layers, action masks) and FullyConv's acting cost, without the game's own.
Each actor steps `--envs-per-actor` envs and acts with a fixed policy (no learner updates: this measures the fleet);
rollouts are collected asynchronously, as IMPALA's actors run. The table gives the median of `--repeats` windows of
`--seconds` each after a warm-up, the ratio to the local path with the same number of envs, and steps/s per core in use.

    python bench/ray_fleet.py                                # both envs, 1 2 4 actors, busy cost
    python bench/ray_fleet.py --envs cost10ms --cost sleep --repeats 5
"""
import argparse, os, platform, statistics, sys, time, warnings
from functools import partial
import numpy as np

warnings.filterwarnings('ignore')
os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')


class CostEnv:
    "A stand-in for a real game: each step costs `cost` seconds of CPU (`busy`) or of waiting (`sleep`)."
    def __init__(self, cost=0.01, mode='busy', length=100):
        from reaver_nb.spec import Space, Spec
        self.cost, self.mode, self.length = cost, mode, length
        self.obs_spec = Spec([Space((4,), 'float32', name='obs')], 'Cost')
        self.act_spec = Spec([Space((), 'int32', 0, 1, categorical=True, name='action')], 'Cost')
        self.rng = np.random.default_rng(0)

    def reset(self, seed=None):
        self.t, self.rng = 0, np.random.default_rng(seed)
        return (self.rng.normal(size=4).astype(np.float32),)

    def step(self, action):
        if self.mode == 'sleep': time.sleep(self.cost)
        else:   # CPU time of this process, so that envs sharing a core each still burn 10 ms of it
            end = time.process_time() + self.cost
            while time.process_time() < end: pass
        self.t += 1
        return (self.rng.normal(size=4).astype(np.float32),), 0.0, False, self.t >= self.length

    def render(self): return None
    def close(self): pass


def env_fn(name, cost):
    if name == 'cost10ms': return partial(CostEnv, 0.01, cost)
    from dataclasses import asdict
    from reaver_nb.envs.sc2 import SC2Env, SC2Settings
    return partial(SC2Env, 'MoveToBeacon', **asdict(SC2Settings(mock=True)))


def policy(fn, n_envs, traj_len):
    "The hyper-parameters, Flax module and parameters every actor acts with."
    import jax
    from reaver_nb.agents.actor_critic import ActorCriticAgent, A2C
    from reaver_nb.training.fleet import RolloutActor
    probe = RolloutActor(fn, 1)
    obs_spec, act_spec = probe.specs(); probe.close()
    agent = ActorCriticAgent(obs_spec, act_spec, A2C(traj_len=traj_len), n_envs)
    return (agent.hp, agent.model), jax.device_get(agent.init(jax.random.PRNGKey(0)).params)


def windows(step, frames_per_call, seconds, repeats):
    "Median env steps/s over `repeats` windows of `seconds`, after one warm-up call."
    step()
    rates = []
    for _ in range(repeats):
        t, frames = time.perf_counter(), 0
        while time.perf_counter() - t < seconds: frames += step() * frames_per_call
        rates.append(frames / (time.perf_counter() - t))
    return statistics.median(rates)


def local_rate(fn, n_envs, traj_len, seconds, repeats):
    from reaver_nb.training.fleet import RolloutActor
    pol, params = policy(fn, n_envs, traj_len)
    actor = RolloutActor(fn, n_envs)
    try: return windows(lambda: (actor.collect(pol, params), 1)[1], traj_len * n_envs, seconds, repeats)
    finally: actor.close()


def fleet_rate(fn, n_actors, k, traj_len, seconds, repeats):
    import ray
    from reaver_nb.training.fleet import RolloutActor
    pol, params = policy(fn, k, traj_len)
    Actor = ray.remote(RolloutActor).options(num_cpus=1, runtime_env=dict(env_vars=dict(JAX_PLATFORMS='cpu')))
    actors = [Actor.remote(fn, k, 0, i) for i in range(n_actors)]
    pol_ref, params_ref = ray.put(pol), ray.put(params)
    pending = {a.collect.remote(pol_ref, params_ref): a for a in actors}
    ray.get(list(pending))                           # every actor built and compiled
    pending = {a.collect.remote(pol_ref, params_ref): a for a in actors}
    def step():                                      # the next rollout to arrive; its actor plays on at once
        nonlocal pending
        ready, _ = ray.wait(list(pending), num_returns=1)
        a = pending.pop(ready[0]); ray.get(ready[0])
        pending[a.collect.remote(pol_ref, params_ref)] = a
        return 1
    try: return windows(step, traj_len * k, seconds, repeats)
    finally:
        for a in actors: ray.kill(a)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--envs', nargs='+', default=['cost10ms', 'mock-sc2'], choices=['cost10ms', 'mock-sc2'])
    p.add_argument('--actors', nargs='+', type=int, default=[1, 2, 4])
    p.add_argument('--envs-per-actor', type=int, default=4)
    p.add_argument('--traj-len', type=int, default=16)
    p.add_argument('--cost', default='busy', choices=['busy', 'sleep'])
    p.add_argument('--seconds', type=float, default=5.)
    p.add_argument('--repeats', type=int, default=3)
    a = p.parse_args(argv)
    import ray   # a Ray of its own ('local'), even where RAY_ADDRESS names a running cluster
    cores = os.cpu_count()
    ray.init(address='local', num_cpus=max(a.actors), include_dashboard=False, logging_level='error', log_to_driver=False)
    print(f"# {platform.node()}: {cores} cores, Python {platform.python_version()}, ray {ray.__version__}; "
          f"{a.envs_per_actor} envs per actor, rollouts of {a.traj_len} steps, cost mode {a.cost!r}; medians of "
          f"{a.repeats} windows of {a.seconds:g} s")
    print(f"| env | actors | envs | fleet steps/s | local steps/s (same envs) | fleet / local | x 1 actor | "
          f"steps/s per core in use |")
    print("|---|---|---|---|---|---|---|---|")
    try:
        for name in a.envs:
            fn, one = env_fn(name, a.cost), None
            for n in a.actors:
                envs = n * a.envs_per_actor
                fleet = fleet_rate(fn, n, a.envs_per_actor, a.traj_len, a.seconds, a.repeats)
                local = local_rate(fn, envs, a.traj_len, a.seconds, a.repeats)
                one = one or fleet
                print(f"| {name} | {n} | {envs} | {fleet:,.0f} | {local:,.0f} | {fleet / local:.2f}x | "
                      f"{fleet / one:.2f}x | {fleet / min(n, cores):,.0f} |", flush=True)
    finally: ray.shutdown()


if __name__ == '__main__':
    sys.exit(main())
