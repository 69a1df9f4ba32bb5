#!/usr/bin/env python
"""Throughput of reaver_nb's fused JAX training path (`reaver_nb.training.fused.FusedTrainer`), against its peers.

One invocation, one machine, two comparisons (env steps per second of wall clock, median of `--repeats` timed runs;
each measurement first makes one untimed-in-the-median warm-up run of the same size, which pays JIT compilation,
and reports its time separately):

1. The fused path against the host path on the same mini-game, `jax:MoveToBeacon` (default `SC2Options`: 16x16
   screen, Reaver's feature layers), A2C with FullyConv:
     * training, fused: `FusedTrainer(env, agent, n_envs, n_seeds).run(carry, n_updates)`, for 1 seed and for
       `--seeds` seeds side by side (env steps/s summed over all seeds);
     * training, host: `ShmVectorEnv` of `JaxHostEnv` workers, `Collector.collect` + `agent.update` per update;
     * env only: a jitted `lax.scan` of `vec_step` (no_op actions) against `ShmVectorEnv.step` (no_op actions).
   Target: fused >= 20x the host path (training, one seed).
2. Fused PPO on gymnax `CartPole-v1` against a PureJaxRL-style reference PPO written in this file (the whole
   training one `jax.jit` that `lax.scan`s over updates), with identical hyper-parameters: 16 envs x 128 steps,
   4 epochs of 4 minibatches of 512, gamma 0.99, GAE lambda 0.95, clip 0.2, value clip 0.2, entropy 0.01, value
   coefficient 0.5 (x 0.5 x MSE on both sides), global-norm clip 0.5, Adam 2.5e-4 (eps 1e-5) constant, advantages
   normalised, separate actor and critic MLPs 64-64 tanh with orthogonal init. Ours runs all updates in one
   `tr.run(carry, n)` call, and also in chunks of `--chunk` updates with a host sync after each (as `reaver train`
   runs it, to log). Each run trains from scratch; the table shows both sides' final mean episode return.
   Target: ours >= 1.0x the reference.

    python bench/fused.py                     # the full benchmark
    python bench/fused.py --quick             # a tiny smoke run (a minute or two), numbers not meaningful
    python bench/fused.py --only cartpole --total-timesteps 1000000

gymnax is a benchmark dependency (pip install gymnax). See bench/README.md.
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, sys, time
from functools import partial
from importlib import metadata

TARGET_HOST = 20.0   # fused / host path, MoveToBeacon training (one seed)
TARGET_REF = 1.0     # ours / PureJaxRL-style reference, CartPole PPO (one call)
SECTIONS = ('minigame', 'cartpole')


def version(dist):
    try: return metadata.version(dist)
    except metadata.PackageNotFoundError: return 'not installed'


def timed_runs(run, repeats: int, steps: int):
    """Call `run()` once as the warm-up, then `repeats` times; `run` returns its own wall seconds (and optionally a
    dict of extras). Returns a result dict with steps/s per run and the median."""
    def call():
        out = run()
        return (out, {}) if isinstance(out, (int, float)) else out
    warm_s, warm_extra = call()
    secs, extras = [], []
    for _ in range(repeats):
        s, e = call()
        secs.append(s); extras.append(e)
    sps = [steps / s for s in secs]
    return dict(steps=steps, warmup_s=warm_s, warmup_extra=warm_extra, secs=secs, sps=sps,
                median=statistics.median(sps), extras=extras)


def log_result(name, r):
    runs = ', '.join(f"{x:,.0f}" for x in r['sps'])
    print(f"  {name:<38} {r['median']:>12,.0f} env-steps/s  (runs: {runs}; {r['steps']:,} steps per run; "
          f"warm-up run {r['warmup_s']:.2f} s)", flush=True)


# ------------------------------------------------------------------------------------------- 1. jax:MoveToBeacon
MINIGAME = 'jax:MoveToBeacon'


def mg_agent(env, a):
    from reaver_nb.agents.actor_critic import ActorCriticAgent, A2C
    return ActorCriticAgent(env.obs_spec, env.act_spec, A2C(traj_len=a.traj_len), a.n_envs, None)


def bench_fused_train(a, n_seeds: int):
    import jax
    from reaver_nb.envs.jax_envs import make_jax_env
    from reaver_nb.training.fused import FusedTrainer
    env = make_jax_env(MINIGAME)
    agent = mg_agent(env, a)
    tr = FusedTrainer(env, agent, a.n_envs, n_seeds)
    carry = jax.block_until_ready(tr.init(a.seed))
    state = dict(carry=carry)

    def run():
        t = time.perf_counter()
        c, m, s = tr.run(state['carry'], a.updates)
        jax.block_until_ready((c, m, s))
        dt = time.perf_counter() - t
        state['carry'] = c   # keep training from where the last run stopped
        return dt
    r = timed_runs(run, a.repeats, a.traj_len * a.n_envs * n_seeds * a.updates)
    r['loop'] = tr.loop
    return r


def bench_fused_env(a):
    import jax, jax.numpy as jnp
    from reaver_nb.envs.jax_envs import make_jax_env
    from reaver_nb.training.fused import vec_reset, vec_step
    env = make_jax_env(MINIGAME)
    noop = tuple(jnp.zeros((a.n_envs,) + s.shape, s.dtype) for s in env.act_spec)
    K = a.env_steps

    @jax.jit
    def steps(vs, key):
        def body(c, _):
            vs, key = c
            key, k = jax.random.split(key)
            vs = vec_step(env, k, vs, noop)[0]
            return (vs, key), None
        return jax.lax.scan(body, (vs, key), None, length=K)[0]
    carry = jax.block_until_ready((vec_reset(env, jax.random.PRNGKey(a.seed), a.n_envs), jax.random.PRNGKey(1)))
    state = dict(carry=carry)

    def run():
        t = time.perf_counter()
        c = jax.block_until_ready(steps(*state['carry']))
        dt = time.perf_counter() - t
        state['carry'] = c
        return dt
    return timed_runs(run, a.repeats, K * a.n_envs)


def bench_host(a):
    "Host-path training and env-only stepping on one ShmVectorEnv (closed in any case)."
    import numpy as np
    import jax
    from reaver_nb.envs.jax_envs import jax_env_factory
    from reaver_nb.envs.shm import ShmVectorEnv
    from reaver_nb.training.host import Collector
    t0 = time.perf_counter()
    venv = ShmVectorEnv([jax_env_factory(MINIGAME)] * a.n_envs, n_workers=a.host_workers)
    out = {}
    try:
        start_s = time.perf_counter() - t0
        agent = mg_agent(venv, a)
        st = dict(state=agent.init(jax.random.PRNGKey(a.seed)), obs=venv.reset(seed=a.seed),
                  key=jax.random.PRNGKey(a.seed + 1))
        col = Collector(venv, agent)
        print(f"  (host path: ShmVectorEnv of {a.n_envs} JaxHostEnv in {venv.n_workers} worker processes, "
              f"started in {start_s:.1f} s)", flush=True)

        def train():
            t = time.perf_counter()
            state, obs, key = st['state'], st['obs'], st['key']
            for _ in range(a.host_updates):
                ro, obs, key, _ = col.collect(state.params, obs, key)
                state, m = agent.update(state, ro)
            jax.block_until_ready((state, m))
            dt = time.perf_counter() - t
            st.update(state=state, obs=obs, key=key)
            return dt
        out['train'] = timed_runs(train, a.repeats, a.traj_len * a.n_envs * a.host_updates)
        log_result('host training', out['train'])

        rng = np.random.default_rng(a.seed)
        actions = venv.act_spec.sample(rng, (a.n_envs,))
        actions[0][:] = 0   # no_op: always available

        def env_only():
            t = time.perf_counter()
            for _ in range(a.host_env_steps): venv.step(actions)
            return time.perf_counter() - t
        out['env'] = timed_runs(env_only, a.repeats, a.host_env_steps * a.n_envs)
        log_result('host env only', out['env'])
        out['start_s'] = start_s
    finally:
        venv.close()
    return out


def section_minigame(a):
    print(f"\n== 1. {MINIGAME}: fused vs host path, A2C(traj_len={a.traj_len}) with FullyConv, {a.n_envs} envs ==",
          flush=True)
    res = {}
    res['fused1'] = bench_fused_train(a, 1)
    log_result(f"fused training, 1 seed (loop={res['fused1']['loop']})", res['fused1'])
    if a.seeds > 1:
        res['fusedK'] = bench_fused_train(a, a.seeds)
        log_result(f"fused training, {a.seeds} seeds, all seeds", res['fusedK'])
    res['fused_env'] = bench_fused_env(a)
    log_result('fused env only (vec_step scan)', res['fused_env'])
    host = bench_host(a)
    res['host'], res['host_env'], res['host_start_s'] = host['train'], host['env'], host['start_s']
    return res


# ------------------------------------------------------------------------------------- 2. gymnax CartPole-v1 PPO
# Identical on both sides; `minibatch_size` gives 4 minibatches of the 16 x 128 batch.
PPO_HP = dict(num_envs=16, num_steps=128, update_epochs=4, num_minibatches=4, gamma=0.99, gae_lambda=0.95,
              clip_eps=0.2, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5, lr=2.5e-4, adam_eps=1e-5)


def ours_ppo_hp():
    from reaver_nb.agents.actor_critic import PPO
    h = PPO_HP
    return PPO(learning_rate=h['lr'], lr_schedule='constant', adam_eps=h['adam_eps'], traj_len=h['num_steps'],
               discount=h['gamma'], gae_lambda=h['gae_lambda'], value_coef=h['vf_coef'], entropy_coef=h['ent_coef'],
               max_grad_norm=h['max_grad_norm'], clip_rewards=0.0, normalize_advantages=True, normalize_returns=False,
               n_epochs=h['update_epochs'], minibatch_size=h['num_envs'] * h['num_steps'] // h['num_minibatches'],
               clip_ratio=h['clip_eps'], clip_value=h['clip_eps'])


def bench_ours_ppo(a, n_updates: int, chunk: int | None):
    "Fused PPO, every run from scratch; all updates in one `run` call (chunk None) or chunks with a host sync each."
    import numpy as np
    import jax
    from reaver_nb.agents.actor_critic import ActorCriticAgent
    from reaver_nb.envs.jax_envs import make_jax_env
    from reaver_nb.training.fused import FusedTrainer
    env = make_jax_env('gymnax:CartPole-v1')
    n_envs = PPO_HP['num_envs']
    agent = ActorCriticAgent(env.obs_spec, env.act_spec, ours_ppo_hp(), n_envs, n_updates)
    tr = FusedTrainer(env, agent, n_envs, 1)
    seeds = iter(range(a.seed, a.seed + 1000))

    def run():
        carry = jax.block_until_ready(tr.init(next(seeds)))   # not timed
        t = time.perf_counter()
        if chunk is None:
            carry, m, s = tr.run(carry, n_updates)
            jax.block_until_ready((carry, m, s))
        else:
            done = 0
            while done < n_updates:
                n = min(chunk, n_updates - done)
                carry, m, s = tr.run(carry, n)
                m = jax.tree.map(lambda x: float(np.mean(x)), m)   # what run_loop does with every chunk
                s = jax.tree.map(np.asarray, s)
                done += n
            jax.block_until_ready(carry)
        dt = time.perf_counter() - t
        s = jax.tree.map(np.asarray, s)
        cnt = float(s['ep_count'].sum())
        ret = float(s['ep_return_sum'].sum() / cnt) if cnt else float('nan')
        return dt, dict(ret=ret, ret_updates=n if chunk else n_updates, loop=tr.loop)
    return timed_runs(run, a.repeats, n_updates * n_envs * PPO_HP['num_steps'])


def make_reference_train(n_updates: int, last_updates: int):
    """PureJaxRL-style PPO (after Chris Lu's single-file `ppo.py`): returns (network, init_params, train) where
    `train(params, key)` is one jitted program that scans over all updates. Written for this benchmark."""
    import numpy as np
    import jax, jax.numpy as jnp
    import flax.linen as nn
    import optax
    import gymnax
    from typing import NamedTuple
    c = PPO_HP
    env, env_params = gymnax.make('CartPole-v1')
    n_act = env.action_space(env_params).n
    obs_shape = env.observation_space(env_params).shape
    batch = c['num_envs'] * c['num_steps']
    mb = batch // c['num_minibatches']
    ortho, zero = nn.initializers.orthogonal, nn.initializers.constant(0.)

    class ActorCritic(nn.Module):
        action_dim: int
        @nn.compact
        def __call__(self, x):
            a = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=zero)(x))
            a = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=zero)(a))
            logits = nn.Dense(self.action_dim, kernel_init=ortho(0.01), bias_init=zero)(a)
            v = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=zero)(x))
            v = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=zero)(v))
            v = nn.Dense(1, kernel_init=ortho(1.0), bias_init=zero)(v)
            return logits, v[..., 0]

    class Transition(NamedTuple):
        done: jax.Array
        action: jax.Array
        value: jax.Array
        reward: jax.Array
        log_prob: jax.Array
        obs: jax.Array
        ep_return: jax.Array   # return of the episode that ended at this step, else 0

    network = ActorCritic(n_act)
    tx = optax.chain(optax.clip_by_global_norm(c['max_grad_norm']), optax.adam(c['lr'], eps=c['adam_eps']))

    def init_params(key):
        return network.init(key, jnp.zeros((1,) + tuple(obs_shape)))

    def log_prob_of(logits, action):
        return jnp.take_along_axis(jax.nn.log_softmax(logits), action[..., None], -1)[..., 0]

    def train(params, key):
        opt_state = tx.init(params)
        key, k = jax.random.split(key)
        obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(k, c['num_envs']), env_params)
        ep_ret = jnp.zeros(c['num_envs'])

        def update_step(runner, _):
            def env_step(runner, _):
                params, opt_state, env_state, last_obs, ep_ret, key = runner
                key, k_act, k_env = jax.random.split(key, 3)
                logits, value = network.apply(params, last_obs)
                action = jax.random.categorical(k_act, logits)
                logp = log_prob_of(logits, action)
                obs, env_state, reward, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                    jax.random.split(k_env, c['num_envs']), env_state, action, env_params)
                done = term | trunc   # gymnax auto-resets; like PureJaxRL, a time-out is treated as an end
                ep_ret = ep_ret + reward
                tr = Transition(done, action, value, reward, logp, last_obs, jnp.where(done, ep_ret, 0.))
                return (params, opt_state, env_state, obs, jnp.where(done, 0., ep_ret), key), tr
            runner, traj = jax.lax.scan(env_step, runner, None, c['num_steps'])
            params, opt_state, env_state, last_obs, ep_ret, key = runner
            _, last_val = network.apply(params, last_obs)

            def gae_step(carry, t):
                gae, next_value = carry
                delta = t.reward + c['gamma'] * next_value * (1 - t.done) - t.value
                gae = delta + c['gamma'] * c['gae_lambda'] * (1 - t.done) * gae
                return (gae, t.value), gae
            _, adv = jax.lax.scan(gae_step, (jnp.zeros_like(last_val), last_val), traj, reverse=True, unroll=16)
            targets = adv + traj.value

            def loss_fn(params, t, gae, targets):
                logits, value = network.apply(params, t.obs)
                logp_all = jax.nn.log_softmax(logits)
                logp = jnp.take_along_axis(logp_all, t.action[..., None], -1)[..., 0]
                v_clipped = t.value + jnp.clip(value - t.value, -c['clip_eps'], c['clip_eps'])
                value_loss = 0.5 * jnp.maximum(jnp.square(value - targets), jnp.square(v_clipped - targets)).mean()
                ratio = jnp.exp(logp - t.log_prob)
                gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                actor_loss = -jnp.minimum(ratio * gae,
                                          jnp.clip(ratio, 1 - c['clip_eps'], 1 + c['clip_eps']) * gae).mean()
                entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
                return actor_loss + c['vf_coef'] * value_loss - c['ent_coef'] * entropy, (value_loss, actor_loss,
                                                                                         entropy)
            grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

            def update_epoch(state, _):
                params, opt_state, key = state
                key, k = jax.random.split(key)
                perm = jax.random.permutation(k, batch)
                data = jax.tree.map(lambda x: x.reshape((batch,) + x.shape[2:]), (traj, adv, targets))
                data = jax.tree.map(lambda x: jnp.take(x, perm, axis=0).reshape((c['num_minibatches'], mb)
                                                                                + x.shape[1:]), data)

                def update_minibatch(po, mbatch):
                    params, opt_state = po
                    (loss, _), grads = grad_fn(params, *mbatch)
                    updates, opt_state = tx.update(grads, opt_state, params)
                    return (optax.apply_updates(params, updates), opt_state), loss
                (params, opt_state), losses = jax.lax.scan(update_minibatch, (params, opt_state), data)
                return (params, opt_state, key), losses
            (params, opt_state, key), losses = jax.lax.scan(update_epoch, (params, opt_state, key), None,
                                                            c['update_epochs'])
            metric = dict(ep_return_sum=traj.ep_return.sum(), ep_count=traj.done.sum(), loss=losses.mean())
            return (params, opt_state, env_state, last_obs, ep_ret, key), metric

        runner = (params, opt_state, env_state, obs, ep_ret, key)
        runner, metrics = jax.lax.scan(update_step, runner, None, n_updates)
        # episode stats of the last `last_updates` updates (the same span as our last chunk)
        tail = jax.tree.map(lambda x: x[-last_updates:].sum(), metrics)
        return runner[0], tail, jax.tree.map(jnp.sum, metrics)

    return network, jax.jit(init_params), jax.jit(train)


def bench_reference_ppo(a, n_updates: int, last_updates: int):
    import jax
    _, init_params, train = make_reference_train(n_updates, last_updates)
    seeds = iter(range(a.seed, a.seed + 1000))

    def run():
        k_init, k_train = jax.random.split(jax.random.PRNGKey(next(seeds)))
        params = jax.block_until_ready(init_params(k_init))   # once, outside any vmap; not timed
        t = time.perf_counter()
        out = jax.block_until_ready(train(params, k_train))
        dt = time.perf_counter() - t
        tail, whole = jax.device_get(out[1:])
        mean = lambda d: float(d['ep_return_sum']) / float(d['ep_count']) if float(d['ep_count']) else float('nan')
        return dt, dict(ret=mean(tail), ret_all=mean(whole), ret_updates=last_updates)
    return timed_runs(run, a.repeats, n_updates * PPO_HP['num_envs'] * PPO_HP['num_steps'])


def section_cartpole(a):
    h = PPO_HP
    batch = h['num_envs'] * h['num_steps']
    n_updates = a.total_timesteps // batch
    if n_updates < 1: raise SystemExit(f"--total-timesteps {a.total_timesteps} is less than one update ({batch}).")
    last = n_updates - a.chunk * ((n_updates - 1) // a.chunk)   # the size of our last chunk
    print(f"\n== 2. gymnax CartPole-v1 PPO: fused vs a PureJaxRL-style reference, {n_updates} updates of "
          f"{h['num_envs']} envs x {h['num_steps']} steps = {n_updates * batch:,} steps per run ==", flush=True)
    print(f"  hyper-parameters (both sides): {h}", flush=True)
    res = {'n_updates': n_updates, 'last_updates': last}
    res['ours'] = bench_ours_ppo(a, n_updates, None)
    log_result('ours, one run() call', res['ours'])
    res['ours_chunked'] = bench_ours_ppo(a, n_updates, a.chunk)
    log_result(f"ours, chunks of {a.chunk} updates", res['ours_chunked'])
    res['ref'] = bench_reference_ppo(a, n_updates, last)
    log_result('PureJaxRL-style reference', res['ref'])
    return res


# ------------------------------------------------------------------------------------------------------- driver
def median_ret(r, key='ret'):
    rets = [e[key] for e in r['extras'] if e.get(key) is not None]
    return statistics.median(rets) if rets else float('nan')


def print_table(a, res):
    rows = []   # (measurement, result, peer name, peer result, target)
    if 'minigame' in res:
        m = res['minigame']
        rows.append((f"{MINIGAME} A2C training, fused 1 seed", m['fused1'], 'host path', m['host'], TARGET_HOST))
        if 'fusedK' in m:
            rows.append((f"{MINIGAME} A2C training, fused {a.seeds} seeds (all)", m['fusedK'], 'host path', m['host'],
                         None))
        rows.append((f"{MINIGAME} env only, fused vec_step", m['fused_env'], 'host ShmVectorEnv', m['host_env'], None))
    if 'cartpole' in res:
        c = res['cartpole']
        rows.append(("CartPole-v1 PPO, ours one call", c['ours'], 'reference', c['ref'], TARGET_REF))
        rows.append((f"CartPole-v1 PPO, ours chunks of {a.chunk}", c['ours_chunked'], 'reference', c['ref'], None))
    w = max(len(r[0]) for r in rows) + 2
    print(f"\n{'measurement':<{w}}{'ours steps/s':>14}{'warm-up s':>11}  {'peer':<18}{'peer steps/s':>14}"
          f"{'warm-up s':>11}{'ratio':>9}  target")
    verdict = []
    for name, r, peer, p, target in rows:
        ratio = r['median'] / p['median']
        tgt = ''
        if target is not None:
            met = ratio >= target
            tgt = f">= {target:g}x: {'MET' if met else 'NOT MET'}"
            verdict.append(dict(measurement=name, ratio=ratio, target=target, met=met))
        print(f"{name:<{w}}{r['median']:>14,.0f}{r['warmup_s']:>11.2f}  {peer:<18}{p['median']:>14,.0f}"
              f"{p['warmup_s']:>11.2f}{ratio:>8.2f}x  {tgt}")
    print(f"(env-steps/s: medians of {a.repeats} timed runs after a warm-up run of the same size, whose wall time"
          " (compilation included) is the warm-up column; seeds: env steps of all seeds together)")
    if 'cartpole' in res:
        c = res['cartpole']
        print(f"CartPole-v1 mean episode return (median over runs; 500 is the maximum): last {c['last_updates']} "
              f"update(s) of each run: ours (chunked) {median_ret(c['ours_chunked']):.1f}, reference "
              f"{median_ret(c['ref']):.1f}; all {c['n_updates']} updates: ours (one call) "
              f"{median_ret(c['ours']):.1f}, reference {median_ret(c['ref'], 'ret_all'):.1f}")
    if 'minigame' in res:
        print(f"host path: ShmVectorEnv start-up {res['minigame']['host_start_s']:.1f} s (not timed)")
    return verdict


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--repeats', type=int, default=3, help='timed runs per measurement (median), after one warm-up')
    ap.add_argument('--only', default=','.join(SECTIONS), help='comma-separated subset of minigame,cartpole')
    ap.add_argument('--seed', type=int, default=0)
    g = ap.add_argument_group('1. jax:MoveToBeacon, fused vs host')
    g.add_argument('--n-envs', type=int, default=16, help='envs (per seed)')
    g.add_argument('--traj-len', type=int, default=16, help='A2C traj_len')
    g.add_argument('--updates', type=int, default=20, help='A2C updates per fused timed run')
    g.add_argument('--seeds', type=int, default=4, help='seeds side by side in the multi-seed fused run (1: skip it)')
    g.add_argument('--host-updates', type=int, default=5, help='A2C updates per host-path timed run')
    g.add_argument('--host-workers', type=int, default=2, help="ShmVectorEnv's worker processes")
    g.add_argument('--env-steps', type=int, default=2000, help='steps per env per fused env-only run')
    g.add_argument('--host-env-steps', type=int, default=200, help='steps per env per host env-only run')
    g = ap.add_argument_group('2. gymnax CartPole-v1 PPO, ours vs reference')
    g.add_argument('--total-timesteps', type=int, default=500_000, help='env steps per training run (whole updates '
                                                                         'of 16 x 128)')
    g.add_argument('--chunk', type=int, default=10, help='updates per run() call in the chunked variant')
    ap.add_argument('--quick', action='store_true', help='tiny sizes for a smoke run (overrides the size flags)')
    ap.add_argument('--jax-platform', default='', help="JAX_PLATFORMS (e.g. cpu; default: JAX's choice); the "
                                                      "host path's workers inherit it")
    ap.add_argument('--json', help='also write the results to this file')
    a = ap.parse_args(argv)
    if a.quick:
        a.repeats, a.n_envs, a.traj_len, a.updates, a.seeds = 2, 2, 8, 2, 2
        a.host_updates, a.env_steps, a.host_env_steps = 1, 100, 10
        a.total_timesteps, a.chunk = 20_000, 4
    only = [s.strip() for s in a.only.split(',') if s.strip()]
    if not only or any(s not in SECTIONS for s in only):
        ap.error(f"--only takes a comma-separated subset of {','.join(SECTIONS)}, not {a.only!r}")
    if a.repeats < 1: ap.error('--repeats must be at least 1')
    if a.jax_platform: os.environ['JAX_PLATFORMS'] = a.jax_platform
    os.environ.setdefault('XLA_PYTHON_CLIENT_PREALLOCATE', 'false')   # the host path's workers share the device

    import jax
    ncpu = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, 'getloadavg') else 0.
    print("reaver_nb fused JAX training throughput" + (' (--quick: smoke sizes, numbers not meaningful)'
                                                        if a.quick else ''))
    print(f"python {platform.python_version()} ({platform.machine()}, {platform.system()}), os.cpu_count() = {ncpu}, "
          f"load average (1 min) {load:.2f}")
    print(f"jax backend {jax.default_backend()}, devices {jax.devices()}")
    print("versions: " + ', '.join(f"{d} {version(d)}" for d in
                                  ('reaver_nb', 'jax', 'jaxlib', 'flax', 'optax', 'gymnax', 'numpy')))
    if load > 0.5 * (ncpu or 1):
        print("WARNING: the machine is busy; every number below is slowed by the other load.")
    print(f"{a.repeats} timed run(s) per measurement after one warm-up run", flush=True)

    res = {}
    if 'minigame' in only: res['minigame'] = section_minigame(a)
    if 'cartpole' in only: res['cartpole'] = section_cartpole(a)
    verdict = print_table(a, res)
    for v in verdict:
        print(f"{v['measurement']}: {v['ratio']:.2f}x, target >= {v['target']:g}x: {'MET' if v['met'] else 'NOT MET'}")
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(dict(settings=vars(a) | dict(ppo_hp=PPO_HP, cpu_count=ncpu, load_average=load,
                                                   backend=jax.default_backend()),
                           results=res, verdict=verdict), f, indent=1, default=str)
    return 0


if __name__ == '__main__':
    sys.exit(main())
