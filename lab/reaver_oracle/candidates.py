"""Candidate game mechanics for the JAX MoveToBeacon, patched in at run time so that Reaver's unchanged agent
(oracle.py) can judge each before it is built into the simulation (issue 28, part 3). None is known from the game;
each is a plausible reading of what the real game does where the map files are silent.

- `deselect`: a `select_point` click or a `select_rect` box with no own unit under it clears the selection (the
  simulation keeps it, as the game's interface does for a click on the ground; whether the API's
  `unit_selection_point` / `unit_selection_rect` do the same is not measured).
- `beacon_select`: a `select_point` click on the beacon selects the beacon (a neutral unit, as clicking a mineral
  field selects it in the game), so the marine is no longer selected and cannot be ordered until reselected.
- `stop_hold`: `Stop_quick` (453) and `HoldPosition_quick` (274), which the game offers a selected marine (pysc2
  lists 16 available functions once the marine is selected: SC2-RL's Part2 notebook) and which Reaver's 2018
  function set holds (`SC2Env.action_ids` at ef2fb8a), stop the selected units now: orders and queue cleared (on
  MoveToBeacon, with no enemy, holding is stopping). Queued (`queued = 1`) they do nothing here. Only matters with a
  function set that holds them (oracle.py `--functions 2018`).
- `preselect`: the marine starts selected, as the other mini-games' scripts select their units at the start
  (DefeatRoaches, FindAndDefeatZerglings; MoveToBeacon's script creates the marine and selects nothing, so the
  simulation starts it unselected). Reaver's agent learns those maps' simulations within 10k-40k frames.
- `beacon_hp`: the beacon has hit points, so `unit_hit_points_ratio` draws it at 255 like a unit at full health (the
  simulation draws 0: no vitals); a real render of that layer would settle it.

`apply(names)` patches the simulation (`reaver_nb.envs.sim`) in place, where `sim.game` reads it; call it before building a game.
"""
import jax.numpy as jnp
import reaver_nb.envs.sim as mg

CANDIDATES = ('deselect', 'beacon_select', 'beacon_hp', 'stop_hold', 'preselect')
STOP_HOLD = (274, 453)   # HoldPosition_quick, Stop_quick

def _select_point_factory(deselect: bool, beacon_select: bool):
    base = mg.game.select_point
    def select_point(u, act, p, res, radius=None):
        out = base(u, act, p, res, radius)
        own = mg.engine._under(u, p, res, mg.SELF, radius)
        sel = out.selected
        if deselect:   # nothing of ours under the click: a plain select (act 0) clears the selection
            sel = jnp.where((own < 0) & (act == 0), jnp.zeros_like(sel), sel)
        if beacon_select:   # the beacon under the click (and none of ours): it alone is selected
            neutral = mg.engine._under(u, p, res, mg.NEUTRAL, radius)
            hit = (own < 0) & (neutral >= 0) & (act == 0)
            sel = jnp.where(hit, jnp.arange(u.kind.shape[0]) == neutral, sel)
        return out.replace(selected=sel & u.alive)
    return select_point

def _select_rect_factory():
    base = mg.game.select_rect
    def select_rect(u, add, p1, p2, radius=None):
        out = base(u, add, p1, p2, radius)
        lo, hi = jnp.minimum(p1, p2), jnp.maximum(p1, p2)
        r = mg.radii(u.kind, radius)[:, None]
        inside = jnp.all((u.pos + r >= lo) & (u.pos - r <= hi), -1) & u.alive & (mg.stat('owner', u.kind) == mg.SELF)
        return out.replace(selected=jnp.where(~inside.any() & (add == 0), jnp.zeros_like(u.selected), out.selected))
    return select_rect

def apply(names):
    names = set(names)
    unknown = names - set(CANDIDATES)
    if unknown: raise ValueError(f"unknown candidates {sorted(unknown)}; choose from {CANDIDATES}")
    if names & {'deselect', 'beacon_select'}:
        mg.game.select_point = _select_point_factory('deselect' in names, 'beacon_select' in names)
    if 'deselect' in names: mg.game.select_rect = _select_rect_factory()
    if 'beacon_hp' in names: mg.KIND['max_hp'][mg.BEACON] = 1.0   # full health: drawn at 255
    if 'stop_hold' in names: _stop_hold()
    if 'preselect' in names: _preselect()
    return sorted(names)

def _preselect():
    "Patch MoveToBeacon.new_units: the marine (row 0) starts selected."
    new0 = mg.MoveToBeacon.new_units
    def new_units(self, key):
        u = new0(self, key)
        return u.replace(selected=u.selected.at[0].set(True))
    mg.MoveToBeacon.new_units = new_units

def _stop_hold():
    "Patch MiniGame.apply_action and observe: Stop_quick / HoldPosition_quick offered to, and obeyed by, a selection."
    act0, obs0 = mg.MiniGame.apply_action, mg.MiniGame.observe
    def selected(u): return (u.selected & u.alive & (mg.stat('owner', u.kind) == mg.SELF)).any()
    def apply_action(self, u, action, camera=None):
        fn = jnp.asarray(self.function_ids)[action[0]]
        q = action[self.arg_index['queued']] if 'queued' in self.arg_index else jnp.int32(0)
        stop = jnp.isin(fn, jnp.asarray(STOP_HOLD)) & selected(u) & (q == 0)
        out = act0(self, u, action, camera)   # an id the simulation does not implement is a no_op there
        c = stop & out.selected & out.alive
        return out.replace(order=jnp.where(c, mg.IDLE, out.order), goal=jnp.where(c[:, None], out.pos, out.goal),
                           target=jnp.where(c, -1, out.target), home=jnp.where(c[:, None], out.pos, out.home),
                           q_order=jnp.where(c[:, None], mg.IDLE, out.q_order),
                           q_target=jnp.where(c[:, None], -1, out.q_target))
    def observe(self, s):
        obs = list(obs0(self, s))
        i = self.obs_spec.names.index('available_actions')
        extra = jnp.isin(jnp.asarray(self.function_ids), jnp.asarray(STOP_HOLD)) & selected(s.units)
        obs[i] = (obs[i].astype(bool) | extra).astype(obs[i].dtype)
        return tuple(obs)
    mg.MiniGame.apply_action, mg.MiniGame.observe = apply_action, observe

# -- the feature layers Reaver's agent of 2018-11-19 observed (its SC2Env defaults), which the simulation does not draw
# screen: player_id, player_relative, selected, unit_hit_points, unit_hit_points_ratio, unit_density, unit_density_aa;
# minimap: player_id, player_relative, selected. Values (pysc2's layers; a game-like choice where no render says):
# player_id 1 for our units, 16 for the neutral player's (the beacon: SC2-RL's renders list ids 1, 2 and 16 across
# the mini-games); unit_hit_points the hit points of the unit drawn on top (marine 45; the beacon 0, no vitals known);
# unit_density_aa 16 x the covered share of the pixel summed over units (SC2-RL's CollectMineralShards render at
# 16 x 16 peaks at 8: a shard covering about half a pixel; the scale of 16 per unit is our reading).
SCREEN_2018 = ('player_id', 'player_relative', 'selected', 'unit_hit_points', 'unit_hit_points_ratio', 'unit_density',
               'unit_density_aa')
MINIMAP_2018 = ('player_id', 'player_relative', 'selected')
_NEW = ('player_id', 'unit_hit_points', 'unit_density_aa')

def _coverage(pos, radius, alive, origin, extent, res, sub=4):
    "[U, res, res]: the share of each pixel a unit's disc covers (sub x sub samples a pixel)."
    ps = extent / res
    c = origin + (jnp.arange(res * sub) + 0.5) * ps / sub
    dx, dy = c[None, :] - pos[:, 0:1], c[None, :] - pos[:, 1:2]
    disc = (dy[:, :, None] ** 2 + dx[:, None, :] ** 2 <= radius[:, None, None] ** 2) & alive[:, None, None]
    return disc.reshape(-1, res, sub, res, sub).mean((2, 4))

def layers_2018():
    "Let the simulation draw player_id, unit_hit_points and unit_density_aa too (patches the `feature_layers` that `sim.game` draws with)."
    base = mg.game.feature_layers
    def layers(u, playable, origin, extent, res, names, minimap=False, radius=None):
        rest = [n for n in names if n not in _NEW]
        drawn = dict(zip(rest, base(u, playable, origin, extent, res, rest, minimap, radius)))
        rad = mg.radii(u.kind, radius)
        cover = mg.render._cover(u.pos, rad, u.alive, origin, extent, res)
        own = mg.stat('owner', u.kind)
        prio = jnp.where(jnp.asarray(mg.ARMED)[u.kind], 2, 1)
        code = jnp.max(jnp.where(cover, (prio * 8 + own)[:, None, None], 0), 0)
        top = jnp.argmax(jnp.where(cover, (prio * 8 + own)[:, None, None], -1), 0)
        pid = jnp.where(own == mg.SELF, 1, jnp.where(own == mg.ENEMY, 2, 16))
        drawn['player_id'] = jnp.where(code > 0, pid[top], 0)
        drawn['unit_hit_points'] = jnp.where(code > 0, jnp.floor(u.hp[top] * (mg.stat('max_hp', u.kind)[top] > 0)), 0.)
        drawn['unit_density_aa'] = jnp.minimum(jnp.round(16 * _coverage(u.pos, rad, u.alive, origin, extent,
                                                                         res).sum(0)), 255.)
        return [drawn[n] for n in names]
    mg.game.feature_layers = layers
