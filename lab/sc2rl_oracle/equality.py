#!/usr/bin/env python
"""The fast judge against the torch original: the same weights give the same outputs, losses, gradients and Adam
steps; the batched JAX env with SC2-RL's observation processing gives what SC2-RL's own processing of the pysc2
drop-in gives, step by step.

    $JUDGE_VENV/bin/python lab/sc2rl_oracle/equality.py --checkout $SC2RL [--out $OUT/equality.json]

Exits 1 if any check is outside its tolerance. SC2-RL's code runs from the checkout, unchanged, with run_judge.py's
patches (the drop-in as `SC2Env`, `unit_density_aa` read as zeros, numpy >= 1.24), as the torch judge runs it.

1. **Env and observation processing** (per map, 3 seeds, 300 steps of random available actions): SC2-RL's
   `init_game` + `reset_and_skip_first_frame` + `FullObsProcesser(select_all=True)` + `merge_screen_and_minimap` +
   `get_action_mask` on the drop-in with `random_seed=s`, against `fast_judge.BatchedGame` (one env, key s): spatial
   and player inputs, the action mask, rewards and episode ends must be identical; each action goes to both as SC2-RL
   sends it (`FunctionCall(id, [[v], [x, y], ...])`) and as the fast judge encodes it.
2. **Network, loss, gradients, Adam** (MoveToBeacon, res 16, SC2-RL's final config): SC2-RL's `FullSpaceA2C_v2`
   built as run.py builds it (torch seeded), its `state_dict` loaded into the JAX parameters; a trajectory of 16 envs
   x 60 steps from the fast judge's env; SC2-RL's own `step` on each step's states with its samples forced to the
   trajectory's actions (`Categorical.sample` replaced in its modules for this check only), its `compute_ac_loss`,
   `(critic + actor).mean().backward()` and `torch.optim.Adam` steps, against fast_judge's `loss_fn` gradient and optax
   Adam: function log-probs, V, spatial log-probs, the actions' log-probs, the entropy, critic and actor losses,
   every parameter's gradient, the parameters after 3 Adam steps.
"""
from __future__ import annotations
import argparse, json, os, sys, time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))

RESULTS = []
NOISE = 'spatial_params_net.conv.0.bias'


def check(name, a, b, rtol=1e-4, atol=1e-5, exact=False):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ok = a.shape == b.shape
    err = float(np.max(np.abs(a - b))) if ok and a.size else 0.0
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    if ok: ok = bool(np.array_equal(a, b)) if exact else bool(np.allclose(a, b, rtol=rtol, atol=atol))
    RESULTS.append(dict(check=name, ok=ok, max_abs_diff=err, max_abs=scale, shape=list(a.shape),
                        tolerance='exact' if exact else f'rtol {rtol:g}, atol {atol:g}'))
    print(f"{'ok  ' if ok else 'FAIL'} {name:60s} max |diff| {err:.3g} (max |value| {scale:.3g}) {RESULTS[-1]['tolerance']}",
          flush=True)
    return ok


def setup(checkout: Path):
    import run_judge
    spec = dict(checkout=str(checkout), env_module=run_judge.DEFAULT_ENV, algo='a2c', unsimulated='zeros')
    run_judge.install(spec)
    os.environ[run_judge.SPEC_VAR] = json.dumps(spec)


def env_check(map_name, seeds, n_steps, res):
    import jax, jax.numpy as jnp
    import fast_judge as F
    from SC_Utils.train_v2 import init_game
    from SC_Utils.train_v3 import reset_and_skip_first_frame
    from SC_Utils.train_v4 import merge_screen_and_minimap
    from SC_Utils.train_v5 import get_action_mask
    from SC_Utils.game_utils import FullObsProcesser
    from pysc2.lib import actions
    table = F.make_table(res)
    env_j = F.BatchedGame(map_name, res, table)
    op = FullObsProcesser(select_all=True)
    step_j = jax.jit(env_j.step)
    game_params = dict(feature_screen=res, feature_minimap=res, action_space="FEATURES")
    ok = True
    for seed in seeds:
        env = init_game(game_params, map_name, random_seed=seed)
        def torch_side(obs):
            s, _ = op.get_state(obs)
            spatial, player = merge_screen_and_minimap(s)
            return spatial, player, get_action_mask(obs[0].observation.available_actions, table.ids)
        obs = reset_and_skip_first_frame(env)
        keys, states, view = jax.jit(env_j.reset)(jax.random.PRNGKey(seed)[None])
        o = env_j.process(view)
        rng = np.random.default_rng(seed)
        bad = dict(spatial=0, player=0, mask=0, reward=0, done=0)
        ends = rewards = 0
        for t in range(n_steps):
            sp_t, pl_t, m_t = torch_side(obs)
            bad['spatial'] += not np.array_equal(sp_t.astype(np.float32), np.asarray(o['spatial'][0]))
            bad['player'] += not np.allclose(pl_t, np.asarray(o['player'][0]), rtol=1e-6)
            bad['mask'] += not np.array_equal(m_t, np.asarray(o['unavailable'][0]))
            avail = np.nonzero(~m_t)[0]
            a = int(rng.choice(avail))
            sp = rng.integers(0, res * res, len(table.spatial_names))
            ct = np.array([rng.integers(0, n) for n in table.categorical_sizes])
            # SC2-RL's FunctionCall of these samples (ActorCriticArchitecture.py:424-519): categorical first, then [x, y]
            args = [[np.int64(ct[k])] for k in np.nonzero(table.categorical_mask[a])[0]]
            args += [[np.int64(sp[k] % res), np.int64(sp[k] // res)] for k in np.nonzero(table.spatial_mask[a])[0]]
            call = actions.FunctionCall(np.int64(table.ids[a]), args)
            obs = env.step([call])
            r_t, d_t = obs[0].reward, obs[0].last()
            keys, states, o_next, r, done, trg = step_j(keys, states, env_j.encode(jnp.array([a]), jnp.array([sp]),
                                                                                     jnp.array([ct])))
            sp_trg, pl_trg, _ = torch_side(obs)
            bad['spatial'] += not np.array_equal(sp_trg.astype(np.float32), np.asarray(trg['spatial'][0]))
            bad['reward'] += float(r_t) != float(r[0]); rewards += float(r_t)
            bad['done'] += bool(d_t) != bool(done[0])
            if d_t:
                ends += 1
                obs = reset_and_skip_first_frame(env)
            o = o_next
        env.close()
        good = not any(bad.values())
        ok &= good
        RESULTS.append(dict(check=f'env {map_name} seed {seed}', ok=good, steps=n_steps, mismatches=bad,
                            episode_ends=ends, reward_sum=rewards))
        print(f"{'ok  ' if good else 'FAIL'} env {map_name} seed {seed}: {n_steps} steps, {ends} episode ends, "
              f"reward {rewards:g}; mismatched steps {bad}", flush=True)
    return ok


class Forced:
    "Categorical whose `sample()` returns the next forced tensor (SC2-RL's sampling made to pick given actions)."
    queue: list = []

    def __new__(cls, *a, **k):
        import torch.distributions as D
        class _C(D.Categorical):
            def sample(self, sample_shape=()):
                return Forced.queue.pop(0)
        return _C(*a, **k)


def network_check(res=16, T=60, B=16, seed=0, lr=3e-4, H=1e-2):
    import jax, jax.numpy as jnp, optax, torch
    import fast_judge as F
    import AC_modules.BatchedA2C as BA, AC_modules.Networks as net
    from SC_Utils.train_v2 import init_game
    torch.manual_seed(seed); np.random.seed(seed)
    env = init_game(dict(feature_screen=res, feature_minimap=res, action_space="FEATURES"), 'MoveToBeacon')
    # run.py:74-97
    HPs = dict(gamma=0.99, n_steps=20, H=H, spatial_model=net.FullyConvPlayerAndSpatial,
               nonspatial_model=net.FullyConvNonSpatial, n_features=256, n_channels=48,
               action_names=list(F.ACTION_NAMES),
               spatial_dict={'in_channels': 38, 'in_player': 8, 'conv_channels': 32, 'player_features': 16},
               nonspatial_dict={'resolution': res, 'kernel_size': 3, 'stride': 2, 'n_channels': 48}, device='cpu')
    agent = BA.FullSpaceA2C_v2(env=env, **HPs)
    env.close()
    table = F.make_table(res, env.action_spec()[0])
    sd = agent.AC.state_dict()
    shapes = F.param_shapes(table)
    check('parameter names and shapes', [1], [int(set(sd) == set(shapes) and
                                                 all(tuple(sd[k].shape) == shapes[k] for k in shapes))], exact=True)
    check('action table (pysc2 ids)', agent.AC.action_table, table.ids, exact=True)
    check('spatial argument mask', agent.AC.spatial_arg_mask, table.spatial_mask, exact=True)
    check('categorical argument mask', agent.AC.categorical_arg_mask, table.categorical_mask, exact=True)
    check('categorical sizes', agent.AC.categorical_sizes, table.categorical_sizes, exact=True)
    p = {k: jnp.asarray(v.detach().numpy()) for k, v in sd.items()}

    # a trajectory from the fast judge's env and policy (with these weights)
    judge = F.Judge('MoveToBeacon', res, lr, H, B)
    key = jax.random.PRNGKey(seed)
    keys, states, view = judge.env.reset(jax.random.split(key, B))
    obs = judge.env.process(view)
    for _ in range(200):   # into the episode, so that the trajectory holds the episode ends at step 240
        key, keys, states, obs, _ = judge.act_step(p, key, keys, states, obs)
    recs = []
    for _ in range(T):
        key, keys, states, obs, rec = judge.act_step(p, key, keys, states, obs)
        recs.append(jax.device_get(rec))
    batch = {k: np.stack([r[k] for r in recs], 1) for k in recs[0]}

    # forward outputs on the first step's states
    s0 = {k: v[:, 0] for k, v in batch.items()}
    with torch.no_grad():
        lp_t, sf_t, nf_t = agent.AC.pi(torch.tensor(s0['spatial']), torch.tensor(s0['player']),
                                       torch.tensor(s0['unavailable']))
        v_t = agent.AC.V_critic(torch.tensor(s0['spatial']), torch.tensor(s0['player']))
        _, _, slp_t = agent.AC.spatial_params_net(sf_t)
    lp_j, slp_j, clp_j, v_j = F.log_probs(p, s0['spatial'], s0['player'], s0['unavailable'], table)
    fin = np.isfinite(lp_t.numpy())
    check('function log-probs are -inf at the same entries', np.isfinite(np.asarray(lp_j)), fin, exact=True)
    check('function log-probs (finite entries)', np.asarray(lp_j)[fin], lp_t.numpy()[fin])
    check('V', np.asarray(v_j), v_t.numpy()[:, 0])
    check('spatial log-probs', np.asarray(slp_j), slp_t.numpy())

    # SC2-RL's step with its samples forced to the trajectory's, then its loss
    BA.Categorical = net.Categorical = Forced
    log_probs, entropies, s_lst, s_trg_lst, calls = [], [], [], [], []
    for t in range(T):
        Forced.queue = [torch.tensor(batch['a'][:, t]), torch.tensor(batch['cat_idx'][:, t]),
                        torch.tensor(batch['sp_idx'][:, t])]
        state = {'spatial': batch['spatial'][:, t].astype(np.float64), 'player': batch['player'][:, t].astype(np.float64)}
        action, log_prob, entropy = agent.step(state, batch['unavailable'][:, t])
        assert not Forced.queue
        log_probs.append(log_prob); entropies.append(entropy); calls.append(action)
        s_lst.append(state)
        s_trg_lst.append({'spatial': batch['trg_spatial'][:, t].astype(np.float64),
                          'player': batch['trg_player'][:, t].astype(np.float64)})
    enc = np.asarray(judge.env.encode(jnp.asarray(batch['a'][:, 0]), jnp.asarray(batch['sp_idx'][:, 0]),
                                      jnp.asarray(batch['cat_idx'][:, 0])))
    # the FunctionCalls SC2-RL sends, through the drop-in's encode, against the fast judge's encoding
    from reaver_nb.envs.pysc2_env import SC2Env
    from pysc2.env.sc2_env import Agent, Race, parse_agent_interface_format
    dropin = SC2Env(map_name='MoveToBeacon', players=[Agent(Race(1), 'x')], agent_interface_format=[
        parse_agent_interface_format(feature_screen=res, feature_minimap=res, action_space='FEATURES')], step_mul=8)
    dropin._available = list(range(600))
    enc_t = np.stack([dropin.encode(c)[0] for c in calls[0]])
    check("SC2-RL's FunctionCalls encoded by the drop-in = fast judge's encoding", enc, enc_t, exact=True)

    logp_j = F.action_log_prob(lp_j, slp_j, clp_j, jnp.asarray(batch['a'][:, 0]), jnp.asarray(batch['sp_idx'][:, 0]),
                               jnp.asarray(batch['cat_idx'][:, 0]), table)
    check("log-prob of the chosen actions (function + its arguments)", np.asarray(logp_j), log_probs[0].detach().numpy())
    check('entropy term of a step (mean negated entropy)', float(jnp.mean(F.neg_entropy(lp_j))),
          float(entropies[0].detach()))

    done = batch['done'].copy()
    n_done = int(done.sum())
    critic, actor, ent = agent.compute_ac_loss(batch['r'].astype(np.float64), log_probs, entropies, s_lst, done.copy(),
                                               done.copy(), s_trg_lst)
    loss_t = (critic + actor).mean()
    opt = torch.optim.Adam(agent.AC.parameters(), lr=lr)
    opt.zero_grad(); loss_t.backward()
    g_t = {k: v.grad.detach().numpy().copy() for k, v in agent.AC.named_parameters()}
    (loss_j, parts), g_j = jax.value_and_grad(F.loss_fn, has_aux=True)(p, {k: jnp.asarray(v) for k, v in batch.items()},
                                                                         table, H)
    print(f'   (trajectory: {B} envs x {T} steps, {n_done} episode ends, reward sum {batch["r"].sum():g})')
    check('critic loss', float(parts['critic']), float(critic.detach()))
    check('actor loss', float(parts['actor']), float(actor.detach()))
    check('entropy term', float(parts['entropy']), float(ent.detach()))
    check('loss (critic + actor)', float(loss_j), float(loss_t.detach()))
    # tolerance: 1e-3 of the largest gradient entry of any parameter (float32 sums in another order)
    gscale = max(float(np.max(np.abs(v))) for v in g_t.values())
    all_ok = all([check(f'gradient {k}', np.asarray(g_j[k]), g_t[k], rtol=1e-3, atol=1e-3 * gscale) for k in sorted(g_t)])
    print(f'   ({NOISE}: its gradient is 0 in exact arithmetic (a log-softmax over the pixels of a map does not change '
          f'with a constant added to the map); both sides give float noise, max {np.max(np.abs(g_t[NOISE])):.2g})')

    # Adam: torch.optim.Adam against optax.adam, 3 steps on the same trajectory
    o = optax.adam(lr, b1=0.9, b2=0.999, eps=1e-8)
    st = o.init(p)
    pj = p
    for i in range(3):
        if i:
            log_probs2, entropies2 = [], []
            for t in range(T):
                Forced.queue = [torch.tensor(batch['a'][:, t]), torch.tensor(batch['cat_idx'][:, t]),
                                torch.tensor(batch['sp_idx'][:, t])]
                _, lp2, e2 = agent.step(s_lst[t], batch['unavailable'][:, t])
                log_probs2.append(lp2); entropies2.append(e2)
            c2, a2, _ = agent.compute_ac_loss(batch['r'].astype(np.float64), log_probs2, entropies2, s_lst, done.copy(),
                                              done.copy(), s_trg_lst)
            opt.zero_grad(); (c2 + a2).mean().backward()
        opt.step()
        g = jax.grad(lambda q: F.loss_fn(q, {k: jnp.asarray(v) for k, v in batch.items()}, table, H)[0])(pj)
        u, st = o.update(g, st, pj)
        pj = optax.apply_updates(pj, u)
    sd2 = agent.AC.state_dict()
    # an Adam step moves each weight by about lr, whatever its gradient: compare the moves, relative to lr
    # (NOISE is left out: Adam divides its float-noise gradient by its own size, so both move it by about lr, each
    # in the direction of its own noise)
    moved = {k: (np.asarray(pj[k]) - np.asarray(p[k]), sd2[k].numpy() - np.asarray(p[k])) for k in sd2 if k != NOISE}
    for k, (a_, b_) in sorted(moved.items()):
        check(f'move of {k} after 3 Adam steps', a_, b_, rtol=0, atol=0.05 * 3 * lr)
    BA.Categorical = net.Categorical = __import__('torch').distributions.Categorical
    return all_ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--checkout', required=True, type=Path)
    ap.add_argument('--maps', nargs='*', default=['MoveToBeacon', 'DefeatZerglingsAndBanelings', 'DefeatRoaches'])
    ap.add_argument('--env-steps', type=int, default=300)
    ap.add_argument('--out', type=Path)
    a = ap.parse_args(argv)
    ck = a.checkout.resolve()
    sys.path.insert(0, str(ck))
    setup(ck)
    import torch
    torch.set_num_threads(1)
    t0 = time.time()
    network_check()
    for m in a.maps:
        env_check(m, (0, 1, 2), a.env_steps, 16)
    n_bad = sum(not r['ok'] for r in RESULTS)
    print(f'{len(RESULTS) - n_bad} passed, {n_bad} failed ({time.time() - t0:.0f} s)')
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(RESULTS, indent=1))
    return 1 if n_bad else 0


if __name__ == '__main__':
    sys.exit(main())
