#!/usr/bin/env python
"""Issue 31: is IMPALA's policy lag what collapses it on jax:MoveToBeacon?

Trains IMPALA (the V-trace update of `ActorCriticAgent`, the map's shipped recipe: configs/sc2/MoveToBeacon.gin,
jax.gin, jax/MoveToBeacon.gin) in one process, without Ray, acting with the parameters of `--lag` updates ago:
0 is on-policy (a synchronous IMPALA), 1 is what the Ray learner sees with 2 actors and 2 rollouts per update
(`policy_lag` 1.0 in those runs' logs). Same envs (the JAX MoveToBeacon, 32 envs x 16 steps per update), same
losses; each seed's run is deterministic, so the lag is the only difference between two runs of one seed.

    python lab/probes/impala_lag.py --seeds 0 1 2 --lag 1 --frames 80000
    python lab/probes/impala_lag.py --seeds 0 1 2 --lag 1 --frames 80000 --normalize weighted   # the code before 2026-12-05
    python lab/probes/impala_lag.py --seeds 0 --lag 1 --gin-param "IMPALA.learning_rate = 2.5e-4"
    python lab/probes/impala_lag.py --seeds 0 1 2 --lag 1 --frames 600000 --every 51200 --restart --test 100
    python lab/probes/impala_lag.py --seeds 0 1 2 --lag 1 --frames 600000 --every 51200 --restart --test 100 --host 2

`--restart` restarts the heads of the recipe's `HeadRestart` (the `queued` head) with the run loop's own callback
(`restart.HeadRestarter`, called after every update): at the first test from `HeadRestart.at` (every
`RunSettings.log_every` updates) where the mean return of the last window's episodes reaches `HeadRestart.min_return`. `--test N` ends each seed with `reaver test`'s evaluation (N episodes, sampled
actions, the same key) of its final parameters. `--host K` plays the rollouts as `reaver train --backend ray
--actors K` does, without Ray: K `fleet.RolloutActor`s in this process, each a `Collector` over an
`InProcessVectorEnv` of n_envs/K host-stepped `JaxHostEnv`s (the map's `env_factory`), their rollouts joined by
`fleet.concat_rollouts` and learnt by `agent.update` (instead of the fused `vec_step` scan).

Prints, every `--every` frames: the mean return of the episodes that ended, the policy's entropy, approx_kl between
the acting and the learning parameters, the share of samples whose action the last update made less likely (ρ < 0.9,
"fell") or more likely (ρ > 1.1, "rose") with the mean advantage the loss gives each, and the share of the
most-chosen function. A run "collapsed" when one function takes over 99% of a log row's steps while its episodes
score under 0.5.
"""
import argparse, time
import numpy as np
import jax, jax.numpy as jnp
from reaver_nb.agents.actor_critic import ActorCriticAgent, IMPALA, A2C, Rollout
from reaver_nb.envs.jax_envs import make_jax_env
from reaver_nb.training.config import config_files, parse_config, RunSettings, HeadRestart
from reaver_nb.training.fused import vec_reset, vec_step, evaluate
from reaver_nb.training.restart import HeadRestarter

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('--seeds', type=int, nargs='+', default=[0])
ap.add_argument('--lag', type=int, default=1, help="updates between the acting and the learning parameters")
ap.add_argument('--frames', type=int, default=120_000)
ap.add_argument('--every', type=int, default=8192)
ap.add_argument('--update', choices=['vtrace', 'a2c'], default='vtrace',
                help="vtrace: IMPALA's update; a2c: A2C's (n-step returns from the acting values, no importance weights)")
ap.add_argument('--normalize', choices=['raw', 'weighted'], default='raw',
                help="with IMPALA.normalize_advantages: standardise the advantages before the importance weights multiply "
                     "them (raw: the code since 2026-12-05) or the weighted advantages (weighted: the code before)")
ap.add_argument('--restart', action='store_true', help="restart the recipe's HeadRestart heads as the run loop does")
ap.add_argument('--test', type=int, default=0, help="episodes of the final evaluation (0: none)")
ap.add_argument('--host', type=int, default=0, metavar='K',
                help="play through K RolloutActors (Collector, InProcessVectorEnv of JaxHostEnv) as Ray's actors do")
ap.add_argument('--gin-param', action='append', default=[])
args = ap.parse_args()

parse_config(config_files('jax:MoveToBeacon'), args.gin_param)
cfg = RunSettings()
env = make_jax_env(cfg.env)
hp = IMPALA() if args.update == 'vtrace' else A2C()
# the advantages the loss uses, watched on the samples whose action the last update made less likely (ρ < 0.9,
# "fell") and more likely (ρ > 1.1, "rose"); with `--normalize weighted`, standardised after the weights (the order
# before 2026-12-05)
from reaver_nb.agents import actor_critic
from reaver_nb.agents.returns import vtrace
WATCH = []   # per update: share fell, their mean advantage, share rose, their mean advantage
def vtrace_watched(*a):
    norm = bool(a[9]) if len(a) > 9 else False   # IMPALA.normalize_advantages
    vs, adv = vtrace(*a[:9], normalize=norm and args.normalize == 'raw')
    if norm and args.normalize == 'weighted': adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    rho = jnp.exp(a[4])
    mean_on = lambda m: jnp.where(m, adv, 0.).sum() / jnp.maximum(m.sum(), 1)
    fell, rose = rho < 0.9, rho > 1.1
    jax.debug.callback(lambda *x: WATCH.append([float(v) for v in x]), fell.mean(), mean_on(fell), rose.mean(),
                       mean_on(rose))
    return vs, adv
actor_critic.vtrace = vtrace_watched
N, T = cfg.n_envs, hp.traj_len
agent = ActorCriticAgent(env.obs_spec, env.act_spec, hp, N, args.frames // (N * T) + 1)
fn_ids = list(env.function_ids)

def step(state, acting, vs, key):
    "One rollout with `acting` parameters, then one update of `state`."
    def body(carry, _):
        vs, key = carry
        key, k_act, k_env = jax.random.split(key, 3)
        a, logp, v, _ = agent._act(acting, vs.obs, k_act)
        new, r, term, trunc, final, ep_ret, ep_len = vec_step(env, k_env, vs, a)
        return (new, key), (vs.obs, a, logp, v, r, term, trunc, ep_ret, term | trunc)
    (vs, key), (obs, acts, logp, v, r, term, trunc, ep_ret, done) = jax.lax.scan(body, (vs, key), None, length=T)
    values = jnp.concatenate([v, agent._value(acting, vs.obs)[None]])
    ro = Rollout(obs, acts, logp, values, r, term, trunc, jnp.zeros_like(r), vs.obs)
    new_state, m = agent._learn(state, ro)
    fn = acts[0]   # the function-id head's choices [T, N]
    counts = jnp.bincount(fn.ravel(), length=len(fn_ids))
    return new_state, vs, key, m, dict(ep_sum=jnp.where(done, ep_ret, 0.).sum(), ep_n=done.sum(), counts=counts)
step = jax.jit(step)

if args.host:
    from reaver_nb.envs.registry import env_factory
    from reaver_nb.training.fleet import RolloutActor, concat_rollouts
    assert N % args.host == 0, f"--host {args.host} must divide the {N} envs"
    count = jax.jit(lambda fn: jnp.bincount(fn.ravel(), length=len(fn_ids)))

    def host_step(actors, state, acting):
        "One rollout from each actor with `acting` parameters (as the Ray actors play them), then one update."
        results = [a.collect((agent.hp, agent.model), jax.device_get(acting)) for a in actors]
        ro = concat_rollouts([r['rollout'] for r in results])
        new_state, m = agent.update(state, ro)
        rets = np.concatenate([r['returns'] for r in results])
        return new_state, m, dict(ep_sum=rets.sum(), ep_n=len(rets), counts=np.asarray(count(ro.actions[0])))

for seed in args.seeds:
    k_agent, k_env, key = jax.random.split(jax.random.PRNGKey(seed), 3)
    state = agent._init(k_agent)
    vs = vec_reset(env, k_env, N)
    past = [state.params] * args.lag   # the parameters before each of the last `lag` updates, oldest first
    frames, t0, acc = 0, time.time(), None
    collapsed_at = None
    restarter = HeadRestarter(HeadRestart(), N * T, 1, cfg.log_every) if args.restart else None
    if args.host:
        actors = [RolloutActor(env_factory(cfg.env), N // args.host, seed, i) for i in range(args.host)]
    print(f"seed {seed}, lag {args.lag}, {args.update} update, normalize {args.normalize}, "
          + (f"host-stepped through {args.host} RolloutActors, " if args.host else "")
          + f"{' '.join(args.gin_param) or 'shipped recipe'}")
    while frames < args.frames:
        acting = past[0] if args.lag else state.params
        if args.host: new_state, m, s = host_step(actors, state, acting)
        else: new_state, vs, key, m, s = step(state, acting, vs, key)
        if args.lag: past = past[1:] + [state.params]   # the parameters this update started from
        state, frames = new_state, frames + N * T
        m, s = jax.device_get((m, s))
        if restarter:   # a chunk of one update, as the run loop would hand it over
            u = frames // (N * T)
            state = restarter.on_chunk(state, dict(ep_count=np.array([s['ep_n']]), ep_return_sum=np.array([s['ep_sum']])),
                                       u - 1, u, frames)
        acc = [m, s, 1] if acc is None else [jax.tree.map(np.add, acc[0], m), jax.tree.map(np.add, acc[1], s), acc[2] + 1]
        if frames % args.every < N * T:
            m, s, n = acc; acc = None
            ret = s['ep_sum'] / max(s['ep_n'], 1)
            share = s['counts'].max() / s['counts'].sum()
            top = fn_ids[int(s['counts'].argmax())]
            ent, kl = m['entropy'] / n, m['approx_kl'] / n
            w = np.mean(WATCH, 0) if WATCH else [np.nan] * 4; WATCH.clear()
            print(f"  {frames:>7,} frames  return {ret:6.2f}  entropy {ent:.3f}  approx_kl {kl:.4f}  "
                  f"fell {w[0]:4.0%} adv {w[1]:+.2f}  rose {w[2]:4.0%} adv {w[3]:+.2f}  "
                  f"grad_norm {m['grad_norm'] / n:7.2f}  top function {top} ({share:.0%})  {time.time() - t0:5.0f} s",
                  flush=True)
            if collapsed_at is None and share > 0.99 and ret < 0.5: collapsed_at = frames
    print(f"seed {seed}, lag {args.lag}: " + (f"collapsed by {collapsed_at:,} frames" if collapsed_at else
                                              f"no collapse in {frames:,} frames"), flush=True)
    if args.test:
        ret = np.asarray(evaluate(env, agent, state.params, jax.random.PRNGKey(0), args.test))
        print(f"seed {seed}, lag {args.lag}: test {ret.mean():.2f} ± {ret.std():.2f} [{ret.min():.0f}, {ret.max():.0f}] "
              f"over {args.test} episodes at {frames:,} frames, {time.time() - t0:.0f} s", flush=True)
