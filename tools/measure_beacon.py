#!/usr/bin/env python
"""Measure on the real game what the JAX MoveToBeacon (nbs/18z_sim_calibration) has to estimate, for whoever has StarCraft II (Colab:
`reaver sc2 install --accept-eula` first). Prints one JSON object:

- `beacon_radius`, `marine_radius`: the units' radii in world units (pysc2 `feature_units` at 256 × 256 pixels);
- `trigger_distance`: bounds on how close the marine's centre must come to the beacon's for the score to change,
  from a marine walking straight at beacons with one game loop per step (the simulation assumes 1.625: the map's
  1.25-unit Beacon Area touched by the marine's 0.375 radius; 1.25 would mean only its centre counts);
- `beacon_pixels_16`: how many pixels the beacon covers in `player_relative` at 16 × 16 (the default resolution);
- `random_play`: mean ± std score of uniformly random play over Reaver's function set (`SC2Settings.functions =
  'minigames'`) at 16 × 16, `step_mul` 8: how often an untrained agent is rewarded (the simulation: 1.41).
- `one_click`: the score of episodes in which the agent selects the marine, clicks `Move_screen` once on the
  beacon's pixels (16 × 16, `step_mul` 8) and then only calls `no_op`. The simulation scores 1: the marine walks to
  the clicked point, scores, and stands there while the beacon jumps. Above 1 would mean the game's Move on the
  beacon targets the beacon unit and the marine follows it to where it jumps, so that one good click keeps
  scoring; `MiniGameSettings.move_follows = True` simulates that. Scripted play scores 29.85 there, above every
  published mean on the real map, and it did not make A2C or PPO learn faster (README, Results), so we expect 1.

    python tools/measure_beacon.py [--episodes 20] [--beacons 15] [--clicks 10]
    python tools/measure_beacon.py --mock      # pysc2's mock game: checks the script, measures nothing
"""
import argparse, json, math, sys
import numpy as np

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('--episodes', type=int, default=20, help='episodes of random play')
ap.add_argument('--beacons', type=int, default=15, help='beacons to walk to for the trigger distance')
ap.add_argument('--clicks', type=int, default=10, help='episodes of one click on the beacon, then no_op')
ap.add_argument('--mock', action='store_true', help="pysc2's mock game instead of StarCraft II")
args = ap.parse_args()

from reaver_nb.sc2.compat import import_pysc2
import_pysc2()
from pysc2.env import sc2_env
from pysc2.lib import actions, features, units
from reaver_nb.envs.sc2 import function_ids
from reaver_nb.sc2.launch import start_game

NEUTRAL, MARINE, BEACON = features.PlayerRelative.NEUTRAL, units.Terran.Marine, 317   # 317: Beacon_Terran
WORLD = 24.0   # pysc2's camera_width_world_units: world units across the screen

def game(res, step_mul, **kw):
    aif = sc2_env.AgentInterfaceFormat(feature_dimensions=sc2_env.Dimensions(screen=res, minimap=min(res, 64)), **kw)
    make = lambda: (__import__('pysc2.env.mock_sc2_env', fromlist=['x']).SC2TestEnv if args.mock else sc2_env.SC2Env)(
        map_name='MoveToBeacon', agent_interface_format=aif, step_mul=step_mul)
    return make() if args.mock else start_game(make)

def unit_xy(obs, kind, res):
    "World-unit (x, y) and radius of the first feature unit of `kind`, or None."
    fu = np.asarray(obs.observation.feature_units)
    rows = [u for u in fu if len(fu) and int(u[features.FeatureUnit.unit_type]) == int(kind)]
    if not rows: return None
    u, s = rows[0], WORLD / res
    return np.array([u[features.FeatureUnit.x], u[features.FeatureUnit.y]], float) * s, float(u[features.FeatureUnit.radius]) * s

out = {'mock': args.mock}
# 1. radii and the trigger distance: walk at beacons, one game loop per step, at 256 x 256
env, res = game(256, 1, use_feature_units=True), 256
try:
    (obs,) = env.reset()
    select = actions.FUNCTIONS.select_army('select')
    inside, outside, radii = [], [], {}
    prev, loops = None, 0
    while len(inside) < args.beacons and loops < 20000:
        m, b = unit_xy(obs, MARINE, res), unit_xy(obs, BEACON, res)
        if m is None or b is None: break
        radii = {'marine_radius': m[1], 'beacon_radius': b[1]}
        if obs.reward > 0 and prev is not None:                     # the trigger fired during this loop
            inside.append(float(np.linalg.norm(m[0] - prev[1][0])))  # marine now vs the beacon it reached
            outside.append(float(np.linalg.norm(prev[0][0] - prev[1][0])))
        prev = (m, b)
        if actions.FUNCTIONS.Move_screen.id in obs.observation.available_actions:
            px = np.clip(np.round(b[0] / (WORLD / res)).astype(int), 0, res - 1)
            act = actions.FUNCTIONS.Move_screen('now', px.tolist())
        else: act = select
        (obs,) = env.step([act]); loops += 1
        if obs.last(): (obs,) = env.reset(); prev = None
    out.update(radii)
    out['trigger_distance'] = {'at_most': max(inside), 'more_than': min(outside), 'beacons': len(inside)} if inside \
        else None
finally: env.close()

# 2. random play and the beacon's footprint at 16 x 16, step_mul 8
env, res = game(16, 8), 16
fns = list(function_ids('minigames'))
rng = np.random.default_rng(0)
try:
    scores, pixels = [], []
    types = env.action_spec()[0].types   # argument sizes at this resolution
    for _ in range(args.episodes):
        (obs,) = env.reset(); score = 0.
        pixels.append(int((np.asarray(obs.observation.feature_screen.player_relative) == NEUTRAL).sum()))
        while not obs.last():
            av = [f for f in fns if f in obs.observation.available_actions] or [0]
            f = actions.FUNCTIONS[int(rng.choice(av))]
            call = actions.FunctionCall(f.id, [[int(rng.integers(s)) for s in types[a.id].sizes] for a in f.args])
            (obs,) = env.step([call]); score += obs.reward
        scores.append(score)
    out['random_play'] = {'mean': float(np.mean(scores)), 'std': float(np.std(scores)), 'episodes': len(scores),
                          'functions': 'minigames'}
    out['beacon_pixels_16'] = {'mean': float(np.mean(pixels)), 'min': min(pixels), 'max': max(pixels)}
    # 3. one click on the beacon, then nothing: does the marine stop there (the simulation) or follow the beacon?
    one, first = [], []
    for _ in range(args.clicks):
        (obs,) = env.reset(); score, clicked, steps, hit = 0., False, 0, None
        while not obs.last():
            call = actions.FUNCTIONS.no_op()
            if not clicked and actions.FUNCTIONS.Move_screen.id not in obs.observation.available_actions:
                call = actions.FUNCTIONS.select_army('select')
            elif not clicked:
                y, x = np.nonzero(np.asarray(obs.observation.feature_screen.player_relative) == NEUTRAL)
                if len(x): call, clicked = actions.FUNCTIONS.Move_screen('now', [int(x.mean()), int(y.mean())]), True
            (obs,) = env.step([call]); score += obs.reward; steps += 1
            if obs.reward > 0 and hit is None: hit = steps
        if clicked: one.append(score)
        if hit is not None: first.append(hit)
    out['one_click'] = {'mean': float(np.mean(one)), 'max': float(max(one)), 'episodes': len(one),
                        'steps_to_first_reward': float(np.mean(first)) if first else None} if one else None
finally: env.close()
print(json.dumps(out, indent=1))
