#!/usr/bin/env python
"""Diagnostic for issue 5: which term of A2C's loss pushes FullyConv's first screen convolution down (its ReLUs die on
jax:MoveToBeacon before any reward shapes the network)? At initialisation, roll out the configuration of run RUN_ID
(32 envs x 16 steps with the initial policy), build A2C's batch (n-step returns, normalised advantages) and, per term
(policy, value, entropy, each with its coefficient), print the change of the mean pre-activation of `screen/Conv_0`
along -grad (an SGD step; first number), along -sign(grad) (Adam's early steps; second) and the same for Conv_0's own
parameters only (third). Negative: the term pushes the layer's outputs down.

    python lab/probes/loss_attribution.py RUN_ID [BATCHES] [--results-dir results]
"""
import argparse, sys
from pathlib import Path
import jax, jax.numpy as jnp, numpy as np
from reaver_nb.training.config import parse_config, RunSettings
from reaver_nb.envs.jax_envs import make_jax_env
from reaver_nb.agents.actor_critic import ActorCriticAgent, AGENTS
ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('run_id'); ap.add_argument('batches', type=int, nargs='?', default=12)
ap.add_argument('--results-dir', default='results')
args = ap.parse_args()
run = Path(args.results_dir) / args.run_id
if not (run / 'config.gin').exists(): sys.exit(f"No run {args.run_id!r} in {args.results_dir} (no config.gin).")
parse_config(run_config=run / 'config.gin'); cfg = RunSettings()
env = make_jax_env(cfg.env)
hp = AGENTS[cfg.agent]()
agent = ActorCriticAgent(env.obs_spec, env.act_spec, hp, cfg.n_envs, 1)
model, pol = agent.model, agent.policy
B, T = 32, 16
obs0, s0 = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), B))
params = model.init(jax.random.PRNGKey(1), jax.tree.map(lambda x: x[:1], obs0))

@jax.jit
def rollout(params, obs, s, key):
    def body(c, k):
        obs, s = c
        dists, v = model.apply(params, obs)
        k1, k2 = jax.random.split(k)
        a = pol.sample(k1, dists)
        obs2, s2, r, term, trunc = jax.vmap(env.step)(jax.random.split(k2, B), s, a)
        # auto-reset
        o_r, s_r = jax.vmap(env.reset)(jax.random.split(k2, B))
        d = term | trunc
        obs2 = jax.tree.map(lambda x, y: jnp.where(d.reshape((-1,) + (1,) * (x.ndim - 1)), y, x), obs2, o_r)
        s2 = jax.tree.map(lambda x, y: jnp.where(d.reshape((-1,) + (1,) * (x.ndim - 1)), y, x), s2, s_r)
        return (obs2, s2), (obs, a, r, d, v)
    (obs, s), (O, A, R, D, V) = jax.lax.scan(body, (obs, s), jax.random.split(key, T))
    _, v_last = model.apply(params, obs)
    def ret_fn(carry, x):
        r, d = x
        carry = r + hp.discount * carry * (1 - d)
        return carry, carry
    _, RET = jax.lax.scan(ret_fn, v_last, (R, D.astype(jnp.float32)), reverse=True)
    return (obs, s), O, A, RET, V, R

def flat(x): return x.reshape((-1,) + x.shape[2:])

def terms(params, O, A, adv, ret):
    dists, v = model.apply(params, O)
    logp = pol.log_prob(dists, A)
    pl = -(logp * adv).mean()
    vl = 0.5 * ((v - ret) ** 2).mean()
    ent = pol.entropy(dists, A).mean()
    return pl, vl, ent

def conv0_mean(params, O):
    _, st = model.apply(params, O, capture_intermediates=True, mutable=['intermediates'])
    x = st['intermediates']['screen']['Conv_0']['__call__'][0]
    return x.mean()

@jax.jit
def analyse(params, O, A, adv, ret):
    gm = jax.grad(conv0_mean)(params, O)
    out = {}
    for i, name in enumerate(['policy', 'value', 'entropy']):
        g = jax.grad(lambda p: terms(p, O, A, adv, ret)[i])(params)
        coef = {'policy': 1.0, 'value': hp.value_coef, 'entropy': -hp.entropy_coef}[name]
        sgd = -coef * sum(jnp.vdot(a, b) for a, b in zip(jax.tree.leaves(g), jax.tree.leaves(gm)))
        sgn = -sum(jnp.vdot(jnp.sign(coef * a), b) for a, b in zip(jax.tree.leaves(g), jax.tree.leaves(gm)))
        # only the conv0 parameters (kernel, bias)
        g0, m0 = g['params']['screen']['Conv_0'], gm['params']['screen']['Conv_0']
        sgn0 = -sum(jnp.vdot(jnp.sign(coef * g0[k]), m0[k]) for k in g0)
        out[name] = (sgd, sgn, sgn0)
    return out

key = jax.random.PRNGKey(2)
c = (obs0, s0)
res = {k: [] for k in ['policy', 'value', 'entropy']}
for it in range(args.batches):
    key, k = jax.random.split(key)
    c, O, A, RET, V, R = rollout(params, *c, k)
    adv = RET - V
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    out = analyse(params, jax.tree.map(flat, O), jax.tree.map(flat, A), flat(adv), flat(RET))
    for n, v in out.items(): res[n].append([float(x) for x in v])
    print(f'batch {it}:', ', '.join(f"{n} {' '.join(f'{x:+.3g}' for x in v[-1])}" for n, v in res.items()),
          f'| rewards {float(R.sum()):g}', flush=True)
for n, v in res.items():
    v = np.array(v)
    print(f'{n:8s} mean ' + ' '.join(f'{x:+.3g}' for x in v.mean(0)) + '  sd ' + ' '.join(f'{x:.3g}' for x in v.std(0))
          + '  negative in ' + ' '.join(f'{x:.0%}' for x in (v < 0).mean(0)) + ' of batches')
