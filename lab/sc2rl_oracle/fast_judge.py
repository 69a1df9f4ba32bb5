#!/usr/bin/env python
"""The fast judge (issue 58): SC2-RL's A2C written again in JAX, on a batched in-process JAX mini-game.

    $JUDGE_VENV/bin/python lab/sc2rl_oracle/fast_judge.py --map MoveToBeacon --seed 0 --steps 18000 \
        --out $OUT/fast_judge                      # writes $OUT/fast_judge/MoveToBeacon_s0/ (fidelity.py reads it)

What it is written from (SC2-RL at the pinned commit, read in a checkout; nothing of it is copied here, this is our
own code of its published architecture and loss; `equality.py` checks it against the torch original):

- **architecture** (`run.py:74-90`, `AC_modules/Networks.py:64-125,237-291,354-412`,
  `AC_modules/ActorCriticArchitecture.py:18-42,320-422`): FullyConvPlayerAndSpatial (conv 5x5 pad 2 to 16, ReLU,
  conv 3x3 pad 1 to 32, ReLU; player MLP 8-64-16 with ReLUs, tiled over the screen and concatenated: 48 channels),
  FullyConvNonSpatial (conv 3x3 stride 2 to 64, ReLU, flatten channel-major, linear to 256, ReLU), a linear actor
  (20 logits, unavailable ones set to -inf before log-softmax) and critic (1), ParallelSpatialParameters (one conv 3x3
  pad 1 giving one R*R map per spatial argument of the action table, log-softmax over the pixels; a flat index i is
  the click (x, y) = (i % R, i // R)), ParallelCategoricalNet (linear 256-256, ReLU, linear to n_args x max_size,
  values past each argument's size set to -inf).
- **initialisation**: torch's defaults for Conv2d and Linear (weights and biases uniform in +-1/sqrt(fan_in));
  SC2-RL sets none of its own.
- **action table**: run.py:24-29's 20 function names, their pysc2 ids and argument types from the env's action spec
  (ActorCriticArchitecture.py:356-405); one network output per (function, argument) pair, in the table's order.
- **observation processing** (`SC_Utils/game_utils.py:26-235`, `SC_Utils/train_v4.py:32-55`): the 26 screen and 12
  minimap channels of `select_all` (one-hot of the listed values, 0 never a channel; `unit_hit_points` and
  `unit_hit_points_ratio` log2 of non-zero values written back into the int32 layer, so truncated to a whole number;
  densities raw), screen then minimap; `player[1:9]` as floats with log2 of non-zero minerals and vespene.
- **acting and loss** (`AC_modules/BatchedA2C.py:148-290,371-494`, `SC_Utils/train_v5.py:152-276`): every argument
  sampled, the log-prob of an action the function's log-prob plus those of its own arguments; the entropy term the
  negated entropy of the function distribution only; n-step (20) targets within the trajectory of 60 and the
  episode, bootstrapped from V of the last target state always (A2C bootstraps at every episode end); critic loss
  MSE, actor loss mean(-logp * (V_trg - V)) + H * mean(-entropy), one Adam step (torch defaults) on their sum.
- **the env and the protocol** (`train_v5.py:41-89,152-276`, `train_v3.py:30-34`): every reset followed by one
  no_op step whose observation the agent sees first; a logged step is one step of all n envs; every
  `test_interval` logged steps, 5 test episodes of the sampled policy on separate envs, their mean score logged as
  `<step>,<score:.1f>` (SC2-RL's `#Steps,score`).

Differences of execution, not of the algorithm: the n envs are one vmapped JAX game in this process (SC2-RL: one
pysc2 env per worker process); the 5 test episodes run side by side (SC2-RL: one after another on one env); random
streams are JAX's. The game is the pysc2 drop-in's (`reaver_nb.envs.pysc2_env.Program`): same reset/step, same key
scheme per env, same action encoding; `unit_density_aa` (refused by the drop-in) reads as zeros, as run_judge.py's
default `--unsimulated zeros`.

Output (`<out>/<Map>_s<seed>/`, the layout fidelity.py and entropy.py read): `<Map>/Logging/FJ<seed>.txt`
(`#Steps,score`), `<Map>/S_fast_<...>.npy` (dict with `losses`: critic, actor, entropies per update, as SC2-RL saves),
`run_info.json` (configuration, versions, wall time).
"""
from __future__ import annotations
import argparse, dataclasses, json, os, platform, sys, time
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))
import sc2rl_runs as R  # noqa: E402

# run.py:24-29, the default --action_names (all logged runs use them)
ACTION_NAMES = ('move_camera', 'select_point', 'select_rect', 'select_idle_worker', 'select_army', 'Attack_screen',
                'Attack_minimap', 'Build_Barracks_screen', 'Build_CommandCenter_screen', 'Build_Refinery_screen',
                'Build_SupplyDepot_screen', 'Harvest_Gather_SCV_screen', 'Harvest_Return_SCV_quick',
                'HoldPosition_quick', 'Move_screen', 'Move_minimap', 'Rally_Workers_screen', 'Rally_Workers_minimap',
                'Train_Marine_quick', 'Train_SCV_quick')

# game_utils.py:29-81 (select_all: the layers whose kind is not 'unknown', in the dict's order)
SCREEN_PROC = (('visibility_map', 'ohe', (1, 2)), ('player_id', 'ohe', (1, 2, 16)),
               ('player_relative', 'ohe', (1, 3, 4)),
               ('unit_type', 'ohe', (9, 18, 20, 45, 48, 105, 110, 317, 341, 342, 1680)), ('selected', 'ohe', (1,)),
               ('unit_hit_points', 'log', None), ('unit_hit_points_ratio', 'log', None),
               ('unit_density', 'float', None), ('unit_density_aa', 'float', None),
               ('pathable', 'ohe', (1,)), ('buildable', 'ohe', (1,)))
MINIMAP_PROC = (('visibility_map', 'ohe', (1, 2)), ('camera', 'ohe', (1,)), ('player_id', 'ohe', (1, 2, 16)),
                ('player_relative', 'ohe', (1, 3, 4)), ('selected', 'ohe', (1,)), ('pathable', 'ohe', (1,)),
                ('buildable', 'ohe', (1,)))
PLAYER_INDEXES = tuple(range(1, 9))   # game_utils.py:211: minerals .. army_count; log2 of minerals and vespene


def channels(proc) -> int: return sum(len(v) if k == 'ohe' else 1 for _, k, v in proc)


# --- the action table -------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Table:
    "SC2-RL's action table at a resolution, and how each entry's arguments reach the game's action tuple."
    ids: tuple                 # pysc2 function id of each of the 20 entries
    spatial_names: tuple       # '<function>/<arg>' of every spatial argument, in SC2-RL's order
    categorical_names: tuple
    categorical_sizes: tuple
    spatial_mask: np.ndarray   # (20, n_spatial) 1 where the entry uses that output
    categorical_mask: np.ndarray
    res: int

    @property
    def max_size(self): return int(max(self.categorical_sizes))


def make_table(res: int, action_spec=None) -> Table:
    """The table as ParallelActorCritic builds it (ActorCriticArchitecture.py:356-405) from an env's action spec
    (default: the pysc2 drop-in's at `res`, as SC2-RL reads the env it is given)."""
    if action_spec is None:
        from reaver_nb.sc2.compat import import_pysc2
        import_pysc2()
        from pysc2.lib import features
        action_spec = features.Features(features.AgentInterfaceFormat(
            feature_dimensions=features.Dimensions(screen=res, minimap=res))).action_spec()
    from pysc2.lib import actions as sc_actions
    types, functions = action_spec[0], action_spec[1]
    ids = [sc_actions.FUNCTIONS[n].id for n in ACTION_NAMES]
    sp, cat, sizes, per = [], [], [], []
    for fid in ids:
        f = functions[fid]
        names = [f'{f.name}/{a.name}' for a in f.args]
        per.append(names)
        for a, n in zip(f.args, names):
            s = types[a.id].sizes
            if len(s) == 1: cat.append(n); sizes.append(int(s[0]))
            else: sp.append(n)
    smask = np.array([[1. if n in per[i] else 0. for n in sp] for i in range(len(ids))], np.float32)
    cmask = np.array([[1. if n in per[i] else 0. for n in cat] for i in range(len(ids))], np.float32)
    return Table(tuple(ids), tuple(sp), tuple(cat), tuple(sizes), smask, cmask, res)


# --- the network --------------------------------------------------------------------------------------------------

def param_shapes(t: Table, in_channels=38, in_player=8, conv_channels=32, player_features=16, n_features=256):
    "torch state_dict name -> shape of SC2-RL's ParallelActorCritic (run.py's defaults)."
    r, nc = t.res, conv_channels + player_features
    flat = 64 * ((r - 3) // 2 + 1) ** 2
    n_sp, n_cat = len(t.spatial_names), len(t.categorical_names)
    return {
        'spatial_features_net.conv_net.net.0.weight': (16, in_channels, 5, 5), 'spatial_features_net.conv_net.net.0.bias': (16,),
        'spatial_features_net.conv_net.net.2.weight': (conv_channels, 16, 3, 3), 'spatial_features_net.conv_net.net.2.bias': (conv_channels,),
        'spatial_features_net.fc_net.0.weight': (64, in_player), 'spatial_features_net.fc_net.0.bias': (64,),
        'spatial_features_net.fc_net.2.weight': (player_features, 64), 'spatial_features_net.fc_net.2.bias': (player_features,),
        'nonspatial_features_net.conv.0.weight': (64, nc, 3, 3), 'nonspatial_features_net.conv.0.bias': (64,),
        'nonspatial_features_net.net.0.weight': (n_features, flat), 'nonspatial_features_net.net.0.bias': (n_features,),
        'actor.linear.weight': (len(t.ids), n_features), 'actor.linear.bias': (len(t.ids),),
        'critic.net.weight': (1, n_features), 'critic.net.bias': (1,),
        'spatial_params_net.conv.0.weight': (n_sp, nc, 3, 3), 'spatial_params_net.conv.0.bias': (n_sp,),
        'categorical_params_net.net.0.weight': (256, n_features), 'categorical_params_net.net.0.bias': (256,),
        'categorical_params_net.net.2.weight': (n_cat * t.max_size, 256), 'categorical_params_net.net.2.bias': (n_cat * t.max_size,),
    }


def init_params(key, t: Table):
    "torch's default init of Conv2d and Linear: weight and bias uniform in +-1/sqrt(fan_in) (kaiming_uniform, a=sqrt(5))."
    import jax, jax.numpy as jnp
    shapes = param_shapes(t)
    out = {}
    names = sorted(n for n in shapes if n.endswith('.weight'))
    for k, n in zip(jax.random.split(key, len(names)), names):
        w = shapes[n]
        bound = 1.0 / np.sqrt(int(np.prod(w[1:])))
        kw, kb = jax.random.split(k)
        out[n] = jax.random.uniform(kw, w, jnp.float32, -bound, bound)
        b = n[:-len('weight')] + 'bias'
        out[b] = jax.random.uniform(kb, shapes[b], jnp.float32, -bound, bound)
    return out


def _conv(x, w, b, stride=1, pad=0):
    "torch's Conv2d (weights OIHW) on NHWC activations (XLA's CPU convolutions are fastest in NHWC)."
    import jax
    y = jax.lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad), (pad, pad)],
                                     dimension_numbers=('NHWC', 'OIHW', 'NHWC'))
    return y + b


def _lin(x, p, n): return x @ p[n + '.weight'].T + p[n + '.bias']


def forward(p, spatial, player, t: Table):
    """The shared torso and every head: (spatial features [B, R, R, 48] (NHWC), nonspatial features [B, 256], function
    logits [B, 20], V [B], spatial logits [B, n_spatial, R*R], categorical logits [B, n_cat, max_size])."""
    import jax, jax.numpy as jnp
    relu = jax.nn.relu
    x = jnp.transpose(spatial, (0, 2, 3, 1))                          # NCHW (SC2-RL's layout) -> NHWC
    x = relu(_conv(x, p['spatial_features_net.conv_net.net.0.weight'], p['spatial_features_net.conv_net.net.0.bias'], pad=2))
    x = relu(_conv(x, p['spatial_features_net.conv_net.net.2.weight'], p['spatial_features_net.conv_net.net.2.bias'], pad=1))
    q = relu(_lin(player, p, 'spatial_features_net.fc_net.0'))
    q = relu(_lin(q, p, 'spatial_features_net.fc_net.2'))
    B, r = x.shape[0], x.shape[1]
    sf = jnp.concatenate([x, jnp.broadcast_to(q[:, None, None, :], (B, r, r, q.shape[-1]))], axis=-1)
    h = relu(_conv(sf, p['nonspatial_features_net.conv.0.weight'], p['nonspatial_features_net.conv.0.bias'], stride=2))
    nf = relu(_lin(jnp.transpose(h, (0, 3, 1, 2)).reshape(B, -1), p, 'nonspatial_features_net.net.0'))   # flattened C, H, W as torch
    logits = _lin(nf, p, 'actor.linear')
    v = _lin(nf, p, 'critic.net')[:, 0]
    sl = _conv(sf, p['spatial_params_net.conv.0.weight'], p['spatial_params_net.conv.0.bias'], pad=1)
    sl = jnp.transpose(sl, (0, 3, 1, 2)).reshape(B, -1, r * r)           # one R*R map per argument, row-major (y, x)
    c = relu(_lin(nf, p, 'categorical_params_net.net.0'))
    cl = _lin(c, p, 'categorical_params_net.net.2').reshape(B, len(t.categorical_names), t.max_size)
    return sf, nf, logits, v, sl, cl


def log_probs(p, spatial, player, unavailable, t: Table):
    "(function log-probs with unavailable entries -inf, spatial log-probs, categorical log-probs, V)."
    import jax, jax.numpy as jnp
    _, _, logits, v, sl, cl = forward(p, spatial, player, t)
    lp = jax.nn.log_softmax(jnp.where(unavailable, -jnp.inf, logits), axis=-1)
    too_big = jnp.arange(t.max_size)[None, :] >= jnp.asarray(t.categorical_sizes)[:, None]
    clp = jax.nn.log_softmax(jnp.where(too_big[None], -jnp.inf, cl), axis=-1)
    return lp, jax.nn.log_softmax(sl, axis=-1), clp, v


def neg_entropy(lp):
    "torch's Categorical(probs).entropy() negated, for log-probs with -inf entries (0 * -inf counts as 0)."
    import jax.numpy as jnp
    safe = jnp.where(jnp.isfinite(lp), lp, 0.)
    return jnp.sum(jnp.exp(lp) * safe, axis=-1)


def action_log_prob(lp, slp, clp, a, sp_idx, cat_idx, t: Table):
    "log pi(a) + the log-probs of the arguments entry `a` uses (BatchedA2C.py:470-494, ActorCriticArchitecture.py:424-498)."
    import jax.numpy as jnp
    f = jnp.take_along_axis(lp, a[:, None], 1)[:, 0]
    s = jnp.take_along_axis(slp, sp_idx[:, :, None], 2)[:, :, 0]
    c = jnp.take_along_axis(clp, cat_idx[:, :, None], 2)[:, :, 0]
    sm, cm = jnp.asarray(t.spatial_mask)[a], jnp.asarray(t.categorical_mask)[a]
    return f + (s * sm).sum(-1) + (c * cm).sum(-1)


# --- the n-step loss ---------------------------------------------------------------------------------------------

def n_step_targets(r, done, gamma: float, n: int):
    """For each (b, t) of a [B, T] trajectory: the last index J of its n-step window inside the trajectory and the
    episode (BatchedA2C.py:211-290: the window [t, t+n) cut at the first done at or after t and at T-1), the
    discounted reward sum over the window and gamma^(J-t+1). SC2-RL's A2C bootstraps at every episode end
    (train_v5.py:57-61), so V(s_trg[J]) is always added."""
    import jax.numpy as jnp
    T = r.shape[1]
    i, j = jnp.arange(T)[:, None], jnp.arange(T)[None, :]
    # first done at or after t: cumulative trick on the reversed axis
    big = T - 1
    idx = jnp.where(done, jnp.arange(T)[None, :], big)                       # [B, T]
    first_done = _rev_cummin(idx)
    J = jnp.minimum(jnp.minimum(jnp.arange(T)[None, :] + n - 1, big), first_done)      # [B, T]
    win = (j >= i)[None] & (j <= J[:, :, None])                                  # [B, T, T]
    disc = gamma ** jnp.clip(j - i, 0, None).astype(jnp.float32)
    R_ = jnp.sum(jnp.where(win, disc[None] * r[:, None, :], 0.), axis=-1)
    G = gamma ** (J - jnp.arange(T)[None, :] + 1).astype(jnp.float32)
    return J, R_, G


def _rev_cummin(x):
    import jax
    return jax.lax.cummin(x, axis=1, reverse=True)


def loss_fn(p, batch, t: Table, H: float, gamma: float = 0.99, n: int = 20):
    """SC2-RL's A2C loss on one trajectory batch (all arrays [B, T, ...]): (critic + actor) and its parts."""
    import jax, jax.numpy as jnp
    B, T = batch['r'].shape
    flat = lambda x: x.reshape((B * T,) + x.shape[2:])
    J, R_, G = n_step_targets(batch['r'], batch['done'], gamma, n)
    trg_sp = jnp.take_along_axis(batch['trg_spatial'], J.reshape(B, T, 1, 1, 1), 1)
    trg_pl = jnp.take_along_axis(batch['trg_player'], J.reshape(B, T, 1), 1)
    *_, v_trg_pred = log_probs(jax.lax.stop_gradient(p), flat(trg_sp), flat(trg_pl),
                               jnp.zeros((B * T, len(t.ids)), bool), t)
    v_trg = jax.lax.stop_gradient(G.reshape(-1) * v_trg_pred + R_.reshape(-1))
    lp, slp, clp, v = log_probs(p, flat(batch['spatial']), flat(batch['player']), flat(batch['unavailable']), t)
    logp = action_log_prob(lp, slp, clp, flat(batch['a']), flat(batch['sp_idx']), flat(batch['cat_idx']), t)
    critic = jnp.mean((v - v_trg) ** 2)
    adv = v_trg - jax.lax.stop_gradient(v)
    ent = jnp.mean(neg_entropy(lp))
    actor = jnp.mean(-logp * adv) + H * ent
    return critic + actor, dict(critic=critic, actor=actor, entropy=ent)


# --- the env: the drop-in's game, vmapped, behind SC2-RL's observation processing --------------------------------

class BatchedGame:
    """n copies of the pysc2 drop-in's game of a map (its `Program`: the same game object, reset/step, rendered
    layers and action encoding), stepped together; every reset followed by one no_op step (train_v3.py:30-34)."""

    def __init__(self, map_name: str, res: int, table: Table, sim=None, game_cls=None, step_mul: int = 8,
                 screen_fix=None):
        from reaver_nb.envs.pysc2_env import Program
        from reaver_nb.envs.sim import MiniGameOptions
        from reaver_nb.envs import sim as S
        from pysc2.lib import actions as sc_actions, features
        self.program = Program(map_name, res, res, step_mul, sim or MiniGameOptions())
        if game_cls is not None:   # a named probe: the same map with a class attribute changed (never a default)
            g0 = self.program.game
            self.program.game = game_cls(g0.options, g0.sim_options)
        g, p = self.program.game, self.program
        self.game, self.res, self.table = g, res, table
        # a probe of the observation (never a default): {screen layer name: fn(layer getter) -> [B, R, R] int32}
        self.screen_fix = screen_fix or {}
        self.screen_rows = {n: i for i, n in enumerate(p.screen_names)}
        self.minimap_rows = {n: i for i, n in enumerate(p.minimap_names)}
        # which slot of the game's action tuple each table entry's arguments go to
        n_args = len(g.act_spec)
        fslot = np.zeros(len(table.ids), np.int32)
        in_game = np.zeros(len(table.ids), bool)
        src = np.full((len(table.ids), n_args), -1, np.int32)     # >= 0: spatial output k; <= -2: categorical -(k+2)
        for i, fid in enumerate(table.ids):
            if fid not in p.slot: continue
            in_game[i], fslot[i] = True, p.slot[fid]
            f = sc_actions.FUNCTIONS[fid]
            for a in f.args:
                name = f'{f.name}/{a.name}'
                if a.name not in g.arg_index: raise ValueError(f'{name}: the game has no argument {a.name}')
                k = g.arg_index[a.name]
                src[i, k] = table.spatial_names.index(name) if name in table.spatial_names else \
                    -(table.categorical_names.index(name) + 2)
        self.fslot, self.in_game, self.src = fslot, in_game, src
        self.noop = np.zeros(n_args, np.int32)
        self.noop[0] = p.slot[0]

    # pure functions of (keys, states); everything below is traced under jit
    def _reset_one(self, key):
        import jax
        key, k = jax.random.split(key)
        _, s = self.game.reset(k)
        key, s, _, _, view = self._step_one(key, s, self.noop)
        return key, s, view

    def _step_one(self, key, s, action):
        import jax, jax.numpy as jnp
        key, k = jax.random.split(key)
        before = s.score
        obs, s, _, done, _ = self.game.step(k, s, tuple(action))
        return key, s, s.score - before, done, self.program.view(s, obs)

    def reset(self, keys):
        import jax
        return jax.vmap(self._reset_one)(keys)

    def step(self, keys, states, actions):
        "(keys, states, processed obs to act on, reward, done, processed obs after the step = the target state)."
        import jax, jax.numpy as jnp
        keys, s_trg, r, done, view = jax.vmap(self._step_one)(keys, states, actions)
        trg = self.process(view)

        def renew(args):
            keys, s_trg, trg = args
            k2, s_new, v_new = self.reset(keys)
            new = self.process(v_new)
            pick = lambda a, b: jnp.where(done.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)
            return (pick(k2, keys), jax.tree_util.tree_map(pick, s_new, s_trg), jax.tree_util.tree_map(pick, new, trg))
        keys, s_next, nxt = jax.lax.cond(done.any(), renew, lambda a: a, (keys, s_trg, trg))
        return keys, s_next, nxt, r, done, trg

    def process(self, view):
        """SC2-RL's FullObsProcesser(select_all=True) + merge_screen_and_minimap on a batch of the drop-in's views:
        dict(spatial [B, 38, R, R] float32, player [B, 8] float32, unavailable [B, 20] bool)."""
        import jax, jax.numpy as jnp
        scr, mm = view['screen'], view['minimap']
        B = scr.shape[0]
        zero = jnp.zeros((B,) + scr.shape[2:], jnp.int32)
        layer = lambda rows, x, n: x[:, rows[n]] if n in rows else zero

        def enc(rows, x, proc, fix={}):
            out = []
            for n, kind, vals in proc:
                l = fix[n](lambda m: layer(rows, x, m)) if n in fix else layer(rows, x, n)
                if kind == 'ohe':
                    out.append((l[:, None] == jnp.asarray(vals, jnp.int32)[None, :, None, None]).astype(jnp.float32))
                elif kind == 'log':   # log2 written back into the int32 layer: floor(log2(x)) for x >= 1
                    out.append(jnp.where(l > 0, 31 - jax.lax.clz(jnp.maximum(l, 1)), 0).astype(jnp.float32)[:, None])
                else:
                    out.append(l.astype(jnp.float32)[:, None])
            return jnp.concatenate(out, axis=1)
        spatial = jnp.concatenate([enc(self.screen_rows, scr, SCREEN_PROC, self.screen_fix), enc(self.minimap_rows, mm, MINIMAP_PROC)], 1)
        pl = jnp.round(view['player'].astype(jnp.float32)).astype(jnp.int32)[:, list(PLAYER_INDEXES)].astype(jnp.float32)
        lg = lambda x: jnp.where(x != 0, jnp.log2(jnp.where(x != 0, x, 1.)), x)
        pl = pl.at[:, 0].set(lg(pl[:, 0])).at[:, 1].set(lg(pl[:, 1]))
        avail = view['available']
        ok = jnp.asarray(self.in_game)[None] & jnp.take(avail, jnp.asarray(self.fslot), axis=1)
        return dict(spatial=spatial, player=pl, unavailable=~ok)

    def encode(self, a, sp_idx, cat_idx):
        "The game's action tuples [B, n_args] of sampled table entries and arguments (the drop-in's `encode`)."
        import jax.numpy as jnp
        src = jnp.asarray(self.src)[a]                                   # [B, n_args]
        sp = jnp.take_along_axis(sp_idx, jnp.maximum(src, 0), 1)
        ct = jnp.take_along_axis(cat_idx, jnp.maximum(-src - 2, 0), 1)
        act = jnp.where(src >= 0, sp, jnp.where(src <= -2, ct, 0)).astype(jnp.int32)
        return act.at[:, 0].set(jnp.asarray(self.fslot)[a])


def sample(key, lp, slp, clp):
    "The function and every argument, as SC2-RL samples them (all arguments drawn, the function's own used)."
    import jax
    k1, k2, k3 = jax.random.split(key, 3)
    a = jax.random.categorical(k1, lp, axis=-1)
    sp = jax.random.categorical(k2, slp, axis=-1)
    ct = jax.random.categorical(k3, clp, axis=-1)
    return a, sp, ct


# --- training -------------------------------------------------------------------------------------------------------

class Judge:
    def __init__(self, map_name, res, lr, H, n_envs=16, unroll=60, n_tests=5, sim=None, game_cls=None):
        import jax, optax
        self.table = make_table(res)
        self.env = BatchedGame(map_name, res, self.table, sim, game_cls)
        self.test_env = self.env
        self.n_envs, self.unroll, self.n_tests, self.H = n_envs, unroll, n_tests, H
        self.opt = optax.adam(lr, b1=0.9, b2=0.999, eps=1e-8)   # torch.optim.Adam's defaults (train_v5.py:165)
        self.act_step = jax.jit(self._act_step)
        self.learn = jax.jit(self._learn)
        self.test_step = jax.jit(self._test_step)
        self.test_reset = jax.jit(self.env.reset)

    def act(self, p, key, obs):
        import jax
        lp, slp, clp, _ = log_probs(p, obs['spatial'], obs['player'], obs['unavailable'], self.table)
        a, sp, ct = sample(key, lp, slp, clp)
        return a, sp, ct, neg_entropy(lp)

    # The rollout is a Python loop over one jitted step: XLA's CPU backend runs these convolutions ~25x slower
    # inside a lax.scan body than as a jitted call of their own (measured here: 150 ms against 5.7 ms for a batch
    # of 16), so a scan over the 60 steps would cost more than the learning.
    def _act_step(self, p, key, keys, states, obs):
        import jax, jax.numpy as jnp
        env = self.env
        key, k = jax.random.split(key)
        a, sp, ct, _ = self.act(p, k, obs)
        keys, states, nxt, r, done, trg = env.step(keys, states, env.encode(a, sp, ct))
        rec = dict(spatial=obs['spatial'], player=obs['player'], unavailable=obs['unavailable'], a=a,
                   sp_idx=sp, cat_idx=ct, r=r.astype(jnp.float32), done=done,
                   trg_spatial=trg['spatial'], trg_player=trg['player'])
        return key, keys, states, nxt, rec

    def _learn(self, p, opt_state, recs):
        import jax, jax.numpy as jnp, optax
        batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x, axis=1), *recs)    # [B, T, ...]
        (loss, parts), g = jax.value_and_grad(loss_fn, has_aux=True)(p, batch, self.table, self.H)
        upd, opt_state = self.opt.update(g, opt_state, p)
        p = optax.apply_updates(p, upd)
        parts['reward'] = batch['r'].sum()
        return p, opt_state, parts

    def update(self, p, opt_state, key, keys, states, obs):
        "One A2C update: `unroll` steps of every env, then one Adam step on the trajectory (train_v5.py:175-214)."
        recs = []
        for _ in range(self.unroll):
            key, keys, states, obs, rec = self.act_step(p, key, keys, states, obs)
            recs.append(rec)
        p, opt_state, parts = self.learn(p, opt_state, recs)
        return p, opt_state, key, keys, states, obs, parts

    def _test_step(self, p, key, keys, states, obs, score, live, counts):
        import jax, jax.numpy as jnp
        env = self.test_env
        key, k = jax.random.split(key)
        a, sp, ct, _ = self.act(p, k, obs)
        counts = counts + jnp.sum(jax.nn.one_hot(a, len(self.table.ids)) * live[:, None], 0)
        keys, states, r, done, view = jax.vmap(env._step_one)(keys, states, env.encode(a, sp, ct))
        return key, keys, states, env.process(view), score + jnp.where(live, r, 0.), live & ~done, counts

    def test(self, p, key):
        "n_tests whole episodes of the sampled policy, side by side (SC2-RL: one after another); each one's score."
        import jax, jax.numpy as jnp
        env = self.test_env
        key, k = jax.random.split(key)
        keys, states, view = self.test_reset(jax.random.split(k, self.n_tests))
        obs = env.process(view)
        score, live = jnp.zeros(self.n_tests), jnp.ones(self.n_tests, bool)
        self.last_test_counts = counts = jnp.zeros(len(self.table.ids))
        for _ in range(int(env.game.max_steps) + 1):
            key, keys, states, obs, score, live, counts = self.test_step(p, key, keys, states, obs, score, live, counts)
            if not bool(live.any()): break
        self.last_test_counts = counts   # how often each table entry was chosen in these episodes
        return score, live


def run(a):
    import jax, jax.numpy as jnp
    cfg = R.A2C_RUNS[a.map]
    res = a.res or cfg['res']; lr = a.lr or cfg['lr']; H = a.H if a.H is not None else cfg['H']
    ti = a.test_interval or cfg['test_interval']
    n_envs = a.procs or cfg['procs'] or R.A2C_FINAL_PROCS
    probe = PROBES[a.probe] if a.probe else None
    from reaver_nb.envs.sim import MiniGameOptions
    sim = MiniGameOptions(**dict(kv.split('=', 1) for kv in a.sim)) if a.sim else MiniGameOptions()
    sim = _typed(sim)
    judge = Judge(a.map, res, lr, H, n_envs, 60, 5, sim, probe[0] if probe else None)
    out = Path(a.out) / f'{a.map}_s{a.seed}'
    (out / a.map / 'Logging').mkdir(parents=True, exist_ok=True)
    run_id = f'FJ{a.seed:02d}'
    log = out / a.map / 'Logging' / f'{run_id}.txt'
    log.write_text('#Steps,score\n')
    key = jax.random.PRNGKey(a.seed)
    key, kp, ke, kt = jax.random.split(key, 4)
    p = init_params(kp, judge.table)
    opt_state = judge.opt.init(p)
    keys, states, view = judge.env.reset(jax.random.split(ke, n_envs))
    obs = judge.env.process(view)
    info = dict(map=a.map, seed=a.seed, logged_steps=a.steps, frames_per_logged_step=n_envs, frames=a.steps * n_envs,
                res=res, lr=lr, H=H, test_interval=ti, n_envs=n_envs, unroll=60, n_steps=20, gamma=0.99,
                sim=dataclasses.asdict(sim), probe=a.probe, probe_what=probe[1] if probe else None,
                judge='fast_judge.py (JAX re-implementation of SC2-RL run.py + train_v5.py)',
                versions=dict(python=platform.python_version(), jax=jax.__version__, numpy=np.__version__),
                started=time.strftime('%Y-%m-%d %H:%M:%S'), status='running', argv=sys.argv[1:])
    (out / 'run_info.json').write_text(json.dumps(info, indent=1))
    losses = dict(critic_losses=[], actor_losses=[], entropies=[])
    t0, c0, step, scores, chosen = time.time(), time.process_time(), 0, [], []
    while step < a.steps:
        p, opt_state, key, keys, states, obs, parts = judge.update(p, opt_state, key, keys, states, obs)
        step += 60
        parts = jax.device_get(parts)
        losses['critic_losses'].append(float(parts['critic'])); losses['actor_losses'].append(float(parts['actor']))
        losses['entropies'].append(float(parts['entropy']))
        if not np.isfinite(parts['critic']): raise SystemExit(f'non-finite loss at {step}')
        if step % ti == 0:
            kt, k = jax.random.split(kt)
            sc, live = jax.device_get(judge.test(p, k))
            scores.append(float(sc.mean()))
            cnt = np.asarray(judge.last_test_counts); freq = cnt / max(cnt.sum(), 1)
            chosen.append(dict(step=step, **{F: round(float(x), 4) for F, x in zip(ACTION_NAMES, freq) if x > 0}))
            top = ', '.join(f'{ACTION_NAMES[i]} {freq[i]:.2f}' for i in np.argsort(-freq)[:4])
            with open(log, 'a') as f: print(f'{step},{sc.mean():.1f}', file=f)
            print(f'{a.map} s{a.seed} step {step}: test {sc.mean():.1f} ({", ".join(f"{x:g}" for x in sc)}) '
                  f'entropy {-parts["entropy"]:.3f}  {time.time() - t0:.0f} s wall, {time.process_time() - c0:.0f} s cpu; '
                  f'functions chosen: {top}', flush=True)
    wall = time.time() - t0
    np.save(out / a.map / f'S_fast_{a.map}_{res}-res_{a.steps}-env-steps_{run_id}.npy',
            dict(score=scores, losses=losses, keywords=[a.map, run_id], HPs=dict(lr=lr, H=H, res=res),
                 functions_chosen=chosen), allow_pickle=True)
    np.savez(out / 'params_final.npz', **{k: np.asarray(v) for k, v in p.items()})   # the torch state_dict's names
    info.update(status='ok', wall_s=round(wall, 1), cpu_s=round(time.process_time() - c0, 1), scores=scores,
                load_avg=os.getloadavg())
    (out / 'run_info.json').write_text(json.dumps(info, indent=1))
    print(f'fast judge: {a.map} seed {a.seed}: {a.steps} logged steps ({a.steps * n_envs} frames) in {wall:.0f} s; '
          f'log {log}', flush=True)
    return info


def _typed(sim):
    "MiniGameOptions from `--sim key=value` strings, each value of its field's type."
    from reaver_nb.envs.sim import MiniGameOptions
    d = MiniGameOptions()
    kw = {}
    for f in dataclasses.fields(sim):
        v = getattr(sim, f.name)
        dv = getattr(d, f.name)
        if isinstance(v, str) and not isinstance(dv, str):
            v = (v.lower() in ('1', 'true', 'yes')) if isinstance(dv, bool) else type(dv)(v)
        kw[f.name] = v
    return MiniGameOptions(**kw)


def _wide_reach():
    from reaver_nb.envs.sim.maps import MoveToBeacon
    class MoveToBeaconWideReach(MoveToBeacon):
        reach = 3 * MoveToBeacon.reach
    return MoveToBeaconWideReach


def _empty_deselects(which: str):
    """MoveToBeacon where a `select_point` (act 0: select) or a `select_rect` (without add) that finds none of the
    player's units empties the selection, instead of keeping it as the simulation does (candidate (e) of issue 58;
    the game's rule is not measured)."""
    import jax.numpy as jnp
    from reaver_nb.envs.sim.maps import MoveToBeacon
    from reaver_nb.envs.sim.engine import SELF, stat, screen_point, unit_under, radii
    fid = {'point': 2, 'rect': 3}[which]

    class MoveToBeaconEmptyDeselects(MoveToBeacon):
        def apply_action(self, u, action, camera=None):
            new = super().apply_action(u, action, camera)
            slot = jnp.asarray(self.impl_index)[action[0]]
            is_f = slot == self.implemented.index(fid)
            arg = lambda n: action[self.arg_index[n]]
            res = self.options.screen_size
            own = u.alive & (stat('owner', u.kind) == SELF)
            if fid == 2:
                found = unit_under(u, screen_point(arg('screen'), res), res, own, self.radius) >= 0
                empty = is_f & (arg('select_point_act') == 0) & ~found
            else:
                p1, p2 = screen_point(arg('screen'), res), screen_point(arg('screen2'), res)
                lo, hi = jnp.minimum(p1, p2), jnp.maximum(p1, p2)
                r = radii(u.kind, self.radius)[:, None]
                inside = jnp.all((u.pos + r >= lo) & (u.pos - r <= hi), -1) & own
                empty = is_f & (arg('select_add') == 0) & ~inside.any()
            return new.replace(selected=jnp.where(empty, False, new.selected))
    return MoveToBeaconEmptyDeselects


def _point_selects_beacon():
    """MoveToBeacon where a `select_point` (act 0: select) on the beacon, with none of the player's units under the
    click, selects the beacon (the game lets a click select a neutral unit, e.g. a mineral field; whether
    `select_point` does so here is not measured): the marine is no longer selected and only the functions of an
    empty selection are offered; the `selected` layer shows the beacon."""
    import jax.numpy as jnp
    from reaver_nb.envs.sim.maps import MoveToBeacon
    from reaver_nb.envs.sim.engine import SELF, NEUTRAL, stat, screen_point, unit_under

    class MoveToBeaconPointSelectsBeacon(MoveToBeacon):
        def apply_action(self, u, action, camera=None):
            new = super().apply_action(u, action, camera)
            slot = jnp.asarray(self.impl_index)[action[0]]
            res = self.options.screen_size
            p = screen_point(action[self.arg_index['screen']], res)
            own = u.alive & (stat('owner', u.kind) == SELF)
            neutral = u.alive & (stat('owner', u.kind) == NEUTRAL)
            hit_own = unit_under(u, p, res, own, self.radius) >= 0
            j = unit_under(u, p, res, neutral, self.radius)
            on = (slot == self.implemented.index(2)) & (action[self.arg_index['select_point_act']] == 0) & ~hit_own & (j >= 0)
            sel = jnp.where(on, jnp.arange(u.kind.shape[0]) == j, new.selected)
            # selecting own units drops the beacon from the selection (a neutral unit is never selected with them)
            return new.replace(selected=jnp.where((sel & own).any(), sel & own, sel))
    return MoveToBeaconPointSelectsBeacon


def _rect_selects_beacon():
    """MoveToBeacon where a `select_rect` (without add) whose box holds none of the player's units but touches the
    beacon selects the beacon, instead of keeping the selection (a box in the game selects another player's unit when
    it holds none of one's own; whether it does so for the beacon is not measured): the marine is then no longer
    selected and only the functions of an empty selection are offered. Suggested by the entropy fingerprint (the game
    leaves the marine unselected more often than the simulation, less often than any empty box would)."""
    import jax.numpy as jnp
    from reaver_nb.envs.sim.maps import MoveToBeacon
    from reaver_nb.envs.sim.engine import SELF, NEUTRAL, stat, screen_point, radii

    class MoveToBeaconRectSelectsBeacon(MoveToBeacon):
        def apply_action(self, u, action, camera=None):
            new = super().apply_action(u, action, camera)
            slot = jnp.asarray(self.impl_index)[action[0]]
            res = self.options.screen_size
            p1 = screen_point(action[self.arg_index['screen']], res)
            p2 = screen_point(action[self.arg_index['screen2']], res)
            lo, hi = jnp.minimum(p1, p2), jnp.maximum(p1, p2)
            r = radii(u.kind, self.radius)[:, None]
            inside = jnp.all((u.pos + r >= lo) & (u.pos - r <= hi), -1) & u.alive
            own, neutral = inside & (stat('owner', u.kind) == SELF), inside & (stat('owner', u.kind) == NEUTRAL)
            box = (slot == self.implemented.index(3)) & (action[self.arg_index['select_add']] == 0)
            on = box & ~own.any() & neutral.any()
            return new.replace(selected=jnp.where(on, neutral, new.selected))
    return MoveToBeaconRectSelectsBeacon


def _click_pays():
    """A spatial-learning control on MoveToBeacon's screen: a `Move_screen` or `Attack_screen` click of the selected
    marine whose point is within the beacon's drawn radius pays +1 at once and the beacon jumps (as when reached);
    reaching it pays too, as on the map. The right click is known (any beacon pixel) and paid in the step it is
    made: any learner of where to click must find it. A probe, not the game."""
    import jax, jax.numpy as jnp
    from reaver_nb.envs.sim.maps import MoveToBeacon
    from reaver_nb.envs.sim.engine import SELF, BEACON, stat, screen_point

    class MoveToBeaconClickPays(MoveToBeacon):
        def step(self, key, s, action):
            u = s.units
            slot = jnp.asarray(self.impl_index)[action[0]]
            clicks = (slot == self.implemented.index(331)) | (slot == self.implemented.index(12))
            sel = (u.selected & u.alive & (stat('owner', u.kind) == SELF)).any()
            p = screen_point(action[self.arg_index['screen']], self.options.screen_size)
            hit = clicks & sel & (jnp.linalg.norm(p - u.pos[1]) <= float(self.radius[BEACON]))
            obs, s2, r, done, tr = super().step(key, s, action)
            k = jax.random.fold_in(key, 7)
            new = self.pick_points(self.draw(k), s2.units.pos[:1], 5., self.beacon_hole)[0]
            u2 = s2.units.replace(pos=s2.units.pos.at[1].set(jnp.where(hit, new, s2.units.pos[1])))
            s2 = s2.replace(units=u2, score=s2.score + hit.astype(s2.score.dtype))
            return self.observe(s2), s2, r + hit, done, tr
    return MoveToBeaconClickPays


class _Probes(dict):
    "Named probes (never defaults): name -> (game class, what it is), built on first use."
    def __getitem__(self, k):
        if k == 'wide-reach':
            return _wide_reach(), ('MoveToBeacon with its reward region three times wider (radius 3.75 instead of the '
                                   "map's 1.25): a spatial-learning control, not the game")
        if k in ('point-empty-deselects', 'rect-empty-deselects'):
            return _empty_deselects(k.split('-')[0]), (f"MoveToBeacon where a select_{k.split('-')[0]} finding none of "
                                                       "the player's units empties the selection (candidate (e))")
        if k == 'click-pays':
            return _click_pays(), ('MoveToBeacon where a Move_screen or Attack_screen click of the selected marine on '
                                   'the beacon pays +1 at once (and the beacon jumps): a spatial-learning control with '
                                   'a known right click, not the game')
        if k == 'point-selects-beacon':
            return _point_selects_beacon(), ('MoveToBeacon where select_point on the beacon selects the beacon '
                                             '(the marine then unselected)')
        if k == 'rect-selects-beacon':
            return _rect_selects_beacon(), ('MoveToBeacon where a select_rect box holding none of the player\'s units '
                                            'but the beacon selects the beacon (the marine then unselected)')
        raise KeyError(k)


PROBES = _Probes()
PROBE_NAMES = ('wide-reach', 'click-pays', 'point-empty-deselects', 'rect-empty-deselects', 'point-selects-beacon',
               'rect-selects-beacon')
# a probe that became a MiniGameSettings field, proven the same (the same losses, update by update, in one seed; the
# runs file's section 8): its earlier runs' records name the setting
BECAME_SETTINGS = {'click-targets-beacon': 'click_to_centre=True'}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--map', required=True, choices=R.MAPS)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--steps', type=int, required=True, help="SC2-RL's logged steps (one step of all envs each)")
    ap.add_argument('--out', required=True)
    ap.add_argument('--res', type=int); ap.add_argument('--lr', type=float); ap.add_argument('--H', type=float)
    ap.add_argument('--procs', type=int, help='envs (default: the logged config, 16)')
    ap.add_argument('--test-interval', type=int)
    ap.add_argument('--sim', nargs='*', default=[], metavar='FIELD=VALUE', help='MiniGameOptions fields (named settings)')
    ap.add_argument('--probe', choices=PROBE_NAMES, help='a named probe of the map (never a default)')
    a = ap.parse_args(argv)
    if (a.test_interval or 60) % 60: raise SystemExit('--test-interval must be a multiple of 60 (SC2-RL tests after an update)')
    return run(a)


if __name__ == '__main__':
    main()
