"""JAX mini-games: each map's reward, respawn and end rules, the action mask, and the game's selection logic."""
import jax, jax.numpy as jnp, numpy as np
import functools
import pytest
import reaver_nb.envs.sim as mg
from reaver_nb.envs.sim import render
from reaver_nb.envs.sim import (MoveToBeacon, CollectMineralShards, DefeatRoaches, GameState, make_units,
                                MARINE, ROACH, BEACON, SHARD, MOVE, IDLE, MAX_MARINES, N_ROACHES, N_SHARDS)

def state_of(units, step=0):
    return GameState(units, jnp.int32(step), jnp.zeros(()), jnp.zeros((), jnp.int32))

def call(game, fn, **args): return mg.function_call(game, fn, **args)

@functools.lru_cache(maxsize=None)
def step(game):
    "`game.step`, compiled once per game (called op by op, each step would recompile its loop of game loops)."
    return jax.jit(game.step)

def names(game, obs): return dict(zip(game.obs_spec.names, obs))

def test_move_to_beacon_reward_and_respawn():
    g = MoveToBeacon()
    u = make_units([MARINE, BEACON], [[10., 12.], [10.5, 12.]], [True, True])
    obs, s, r, term, trunc = step(g)(jax.random.PRNGKey(0), state_of(u), call(g, 0))
    assert float(r) == 1.0 and not bool(term)
    marine, beacon = np.asarray(s.units.pos)
    assert np.linalg.norm(marine - beacon) >= 5.0                       # the beacon reappears >= 5 units away
    (x0, y0), (x1, y1) = g.playable
    assert x0 <= beacon[0] <= x1 and y0 <= beacon[1] <= y1
    _, s, r, _, _ = step(g)(jax.random.PRNGKey(1), s, call(g, 0))
    assert float(r) == 0.0                                               # a standing marine scores nothing more

def test_move_to_beacon_start_and_time_limit():
    g = MoveToBeacon()
    for k in range(20):
        obs, s = g.reset(jax.random.PRNGKey(k))
        marine, beacon = np.asarray(s.units.pos)
        assert np.linalg.norm(marine - beacon) >= 5.0 and not bool(s.units.selected[0])   # >= 5 away, unselected
    s = s.replace(step=jnp.int32(g.max_steps - 1))
    _, _, _, term, trunc = step(g)(jax.random.PRNGKey(0), s, call(g, 0))
    assert g.max_steps == 240 and bool(term) and not bool(trunc)         # 120 s = 240 steps of 8 loops: LAST

def test_move_to_beacon_follows_the_map_script():
    "Where marines and beacons appear, and when the beacon counts as reached (MoveToBeacon.SC2Map's triggers)."
    g = MoveToBeacon()
    _, s = jax.vmap(g.reset)(jax.random.split(jax.random.PRNGKey(0), 2000))
    marine, beacon = np.asarray(s.units.pos[:, 0]), np.asarray(s.units.pos[:, 1])
    assert (marine >= [1, 1]).all() and (marine <= [23, 17]).all()                 # the playable area, 22 x 16
    assert (beacon >= [2.5, 2.5]).all() and (beacon <= [21.5, 15.5]).all()         # the Beacon Spawn Region ...
    assert np.linalg.norm(beacon - [12., 9.], axis=1).min() >= 4.0                  # ... less its central disc
    assert np.linalg.norm(marine - beacon, axis=1).min() >= 5.0
    # UnitInRegion(marine, "Beacon Area"): the marine's centre within the circle of radius 1.25 on the beacon ...
    lenient = MoveToBeacon(sim=mg.MiniGameOptions(reach_footprint=True))
    for game, d, want in ((g, 1.2, 1.0), (g, 1.3, 0.0),
                          (lenient, 1.6, 1.0), (lenient, 1.65, 0.0)):   # ... or, leniently, any of it (radius 0.375)
        u = make_units([MARINE, BEACON], [[8., 9.], [8. + d, 9.]], [True, True])
        _, _, r, _, _ = step(game)(jax.random.PRNGKey(0), state_of(u), call(game, 0))
        assert float(r) == want, (game.sim_options.reach_footprint, d)

def test_orders_stop_at_the_playable_edge():
    g = MoveToBeacon()
    u = make_units([MARINE, BEACON], [[12., 9.], [3., 3.]], [True, True]).replace(selected=jnp.array([True, False]))
    corner = g.options.screen_size ** 2 - 1                                          # bottom-right pixel: off the map
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), state_of(u), call(g, 331, screen=corner))
    assert np.allclose(np.asarray(s.units.goal[0]), [23., 17.])
    for _ in range(40): _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 0))
    assert np.allclose(np.asarray(s.units.pos[0]), [23., 17.], atol=1e-4)

def test_collect_mineral_shards_rules():
    g = CollectMineralShards()
    obs, s = g.reset(jax.random.PRNGKey(0))
    pos = np.asarray(s.units.pos)
    assert np.linalg.norm(pos[2:, None] - pos[None, :2], axis=-1).min() >= 2.0
    assert (pos[2:] >= [2, 2]).all() and (pos[2:] <= [22, 16]).all()          # the map's Mineral Area
    # a marine standing on a shard collects it (+1) and the shard disappears
    u = s.units.replace(pos=s.units.pos.at[0].set(s.units.pos[2]))
    _, s2, r, _, _ = step(g)(jax.random.PRNGKey(1), state_of(u), call(g, 0))
    assert float(r) == 1.0 and not bool(s2.units.alive[2]) and int(s2.units.alive[2:].sum()) == N_SHARDS - 1
    # the last shard taken: all 20 respawn, at least 2 units from both marines
    alive = jnp.zeros(2 + N_SHARDS, bool).at[:3].set(True)
    u = s.units.replace(alive=alive, pos=s.units.pos.at[0].set(s.units.pos[2]))
    _, s3, r, _, _ = step(g)(jax.random.PRNGKey(2), state_of(u), call(g, 0))
    assert float(r) == 1.0 and int(s3.units.alive[2:].sum()) == N_SHARDS
    pos = np.asarray(s3.units.pos)
    assert np.linalg.norm(pos[2:, None] - pos[None, :2], axis=-1).min() >= 2.0 - 1e-5

def test_defeat_roaches_rules():
    g = DefeatRoaches()
    obs, s = g.reset(jax.random.PRNGKey(0))
    u = s.units
    assert int(u.alive[:MAX_MARINES].sum()) == 9 and int(u.alive[MAX_MARINES:].sum()) == N_ROACHES
    assert bool(u.selected[:9].all())                                     # preselected
    # a roach about to die: +10
    u1 = u.replace(hp=u.hp.at[MAX_MARINES].set(0.5), order=u.order.at[:9].set(mg.ATTACK_UNIT),
                   target=u.target.at[:9].set(MAX_MARINES),
                   pos=u.pos.at[:9].set(u.pos[MAX_MARINES] - jnp.array([3., 0.])))
    _, s1, r, term, _ = step(g)(jax.random.PRNGKey(1), state_of(u1), call(g, 0))
    assert float(r) >= 10.0 - 9 and not bool(s1.units.alive[MAX_MARINES])
    # the last roach dies: 4 new roaches, 5 fresh marines, everyone back in lines
    alive = u.alive.at[MAX_MARINES + 1:].set(False).at[5:9].set(False)  # 5 marines and 1 roach left
    u2 = u1.replace(alive=alive, hp=jnp.where(alive, u1.hp, -1e9))
    _, s2, r, term, _ = step(g)(jax.random.PRNGKey(2), state_of(u2), call(g, 0))
    assert int(s2.units.alive[MAX_MARINES:].sum()) == N_ROACHES and bool((s2.units.hp[MAX_MARINES:] == 145).all())
    assert int(s2.units.alive[:MAX_MARINES].sum()) == 5 + 5 and int(s2.extra) == 1 and not bool(term)
    mx = np.asarray(s2.units.pos)[:MAX_MARINES][np.asarray(s2.units.alive[:MAX_MARINES])][:, 0]
    rx = np.asarray(s2.units.pos)[MAX_MARINES:, 0]
    assert np.ptp(mx) < 3 and np.abs(mx.mean() - rx.mean()) > 10        # opposite sides
    # the last marine dies: -1 and the episode ends
    alive = u.alive.at[1:MAX_MARINES].set(False)
    u3 = u.replace(alive=alive, hp=u.hp.at[0].set(1.), pos=u.pos.at[0].set(u.pos[MAX_MARINES] - jnp.array([2., 0.])))
    _, s3, r, term, _ = step(g)(jax.random.PRNGKey(3), state_of(u3), call(g, 0))
    assert float(r) == -1.0 and bool(term)

def test_unavailable_functions_are_masked_and_ignored():
    g = MoveToBeacon(sim=mg.MiniGameOptions(functions='core'))   # the lenient set: the six functions the maps need
    obs, s = g.reset(jax.random.PRNGKey(0))
    avail = names(g, obs)['available_actions']
    ids = [g.function_ids[i] for i in np.flatnonzero(np.asarray(avail))]
    assert ids == [0, 2, 3, 7]                       # nothing selected: no Move_screen / Attack_screen
    # the game would reject Move_screen now: the env ignores it (a no_op), the marine does not move
    _, s2, _, _, _ = step(g)(jax.random.PRNGKey(1), s, call(g, 331, screen=0))
    assert int(s2.units.order[0]) == IDLE and np.allclose(s2.units.pos, s.units.pos)
    obs, s3, _, _, _ = step(g)(jax.random.PRNGKey(1), s, call(g, 7))
    ids = [g.function_ids[i] for i in np.flatnonzero(np.asarray(names(g, obs)['available_actions']))]
    assert ids == [0, 2, 3, 7, 12, 331]
    _, s4, _, _, _ = step(g)(jax.random.PRNGKey(1), s3, call(g, 331, screen=0))
    assert int(s4.units.order[0]) == MOVE
    _, s5, _, _, _ = step(g)(jax.random.PRNGKey(1), s3, call(g, 333, screen=0))
    assert int(s5.units.order[0]) == IDLE           # Patrol_screen: not offered by 'core', so a no_op
    # the default, functions='game': every function of the set that the game offers on these maps ...
    for fset in ('minigames', 'minigames_all'):       # (the set's building and training functions: never here)
        gg = MoveToBeacon(functions=fset)
        assert gg.sim_options.functions == 'game'
        obs, sg = gg.reset(jax.random.PRNGKey(0))
        ids = [gg.function_ids[i] for i in np.flatnonzero(np.asarray(names(gg, obs)['available_actions']))]
        assert ids == [0, 1, 2, 3, 4, 7]             # nothing selected: no unit commands
        obs, sg, _, _, _ = step(gg)(jax.random.PRNGKey(1), sg, call(gg, 7))
        ids = [gg.function_ids[i] for i in np.flatnonzero(np.asarray(names(gg, obs)['available_actions']))]
        # a selected marine's card: Reaver's set, and with 'minigames_all' HoldPosition_quick and Stop_quick (274, 453)
        assert ids == [0, 1, 2, 3, 4, 7, 12, 13, 331, 332, 333, 334, 451, 452] + ([274, 453] if fset == 'minigames_all' else [])
    _, sg2, _, _, _ = step(gg)(jax.random.PRNGKey(1), sg, call(gg, 333, screen=0))
    assert int(sg2.units.order[0]) == mg.PATROL
    with pytest.raises(ValueError, match="MiniGameSettings.functions"):
        MoveToBeacon(sim=mg.MiniGameOptions(functions='all'))

def test_minimap_orders_camera_and_control_groups():
    g = CollectMineralShards(sim=mg.MiniGameOptions(functions='game'))
    u = make_units([MARINE, MARINE] + [SHARD] * N_SHARDS, [[6., 12.], [18., 12.]] + [[-50., -50.]] * N_SHARDS,
                   [True, True] + [False] * N_SHARDS).replace(selected=jnp.array([True, False] + [False] * N_SHARDS))
    s = state_of(u)
    # Move_minimap to the minimap's corner pixel: the marine heads for the playable area's corner
    _, s1, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 332, minimap=0))
    assert int(s1.units.order[0]) == MOVE and np.allclose(s1.units.goal[0], [1., 1.])
    # move_camera: the camera is locked by the maps, nothing changes
    _, s2, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 1, minimap=0))
    assert np.allclose(s2.units.pos[:2], s.units.pos[:2]) and int(s2.units.order[0]) == IDLE
    # control groups: set 1 = marine 0; select marine 1 and set-and-steal into 2; recall 1 and 2
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 4, control_group_act=1, control_group_id=1))
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 7))
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 4, control_group_act=3, control_group_id=2))
    assert np.asarray(s.units.groups[:2, 1]).tolist() == [False, False]   # stolen from group 1
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 4, control_group_act=0, control_group_id=1))
    assert np.asarray(s.units.selected[:2]).tolist() == [True, True]      # empty group 1: selection kept
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 2, select_point_act=0, screen=mg.screen_pixel(s.units.pos[1], 16)))
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 4, control_group_act=2, control_group_id=2))
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 4, control_group_act=0, control_group_id=2))
    assert np.asarray(s.units.selected[:2]).tolist() == [True, True]

def test_selection_follows_the_game():
    g = CollectMineralShards()
    u = make_units([MARINE, MARINE] + [SHARD] * N_SHARDS, [[6., 12.], [18., 12.]] + [[-50., -50.]] * N_SHARDS,
                   [True, True] + [False] * N_SHARDS)
    s = state_of(u)
    res = g.options.screen_size
    px = lambda p: mg.screen_pixel(jnp.asarray(p), res)
    sel = lambda s: np.asarray(s.units.selected[:2]).tolist()
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 2, select_point_act=0, screen=px([6., 12.])))
    assert sel(s) == [True, False]
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 2, select_point_act=1, screen=px([18., 12.])))
    assert sel(s) == [True, True]                    # toggle adds
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 2, select_point_act=0, screen=px([12., 20.])))
    assert sel(s) == [True, True]                    # a click on empty ground keeps the selection
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 2, select_point_act=1, screen=px([18., 12.])))
    assert sel(s) == [True, False]                   # toggle removes
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 3, select_add=0, screen=px([13., 1.]), screen2=px([23., 20.])))
    assert sel(s) == [False, True]                   # a box around the right marine
    _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 7, select_add=0))
    assert sel(s) == [True, True]                    # select_army

def test_feature_layers_are_pysc2_values():
    g = DefeatRoaches()
    obs, s = g.reset(jax.random.PRNGKey(0))
    f = names(g, obs)
    pr = np.asarray(f['screen/player_relative'])
    assert set(np.unique(pr)) == {0, 1, 4}           # background, self, enemy
    assert (np.asarray(f['screen/selected'])[pr == 1] == 1).all()
    hp = np.asarray(f['screen/unit_hit_points_ratio'])
    assert hp.max() == 255 and hp[pr == 0].max() == 0
    assert set(np.unique(np.asarray(f['screen/visibility_map']))) <= {0, 2}
    cam = np.asarray(f['minimap/camera'])
    assert 0 < cam.mean() < 1                        # the camera box covers part of the 64 x 64 map
    for sp, x in zip(g.obs_spec, obs): assert sp.contains(np.asarray(x)), sp

def test_scripted_policies_score_like_strong_play():
    """Calibration: the scripted MoveToBeacon player scores about what the GrandMaster (28) and best agents (26-27) do
    (these 20 episodes: 26.35 with the game's reach, the marine's centre within 1.25; 28.10 with the lenient 1.625)."""
    g = MoveToBeacon()
    scores = np.asarray(mg.play(g, mg.scripted_policy(g), jax.random.PRNGKey(0), 20))
    assert 24 <= scores.mean() <= 32, scores

def test_patrol_fights_and_follow_keeps_close():
    # a patrolling marine acquires an enemy that comes within range + 2, as an attack-move does; a moving one does not
    u = make_units([MARINE, ROACH], [[2., 8.], [12., 12.]], [True, True]).replace(selected=jnp.array([True, False]))
    for how, fights in (('patrol', True), ('move', False)):
        v = mg.give_order(u, 0, jnp.array([20., 8.]), 16, how)
        for _ in range(60): v = mg.game_loop(v)
        assert (int(v.target[0]) == 1) == fights, how
    # follow: the follower closes to FOLLOW_GAP and keeps the order while its leader walks; the leader dead, it idles
    u = make_units([MARINE, MARINE], [[2., 8.], [12., 8.]], [True, True]).replace(selected=jnp.array([True, False]))
    u = mg.give_order(u, 0, jnp.array([12., 8.]), 16, 'smart')
    assert int(u.order[0]) == mg.FOLLOW and int(u.target[0]) == 1
    u = u.replace(order=u.order.at[1].set(MOVE), goal=u.goal.at[1].set(jnp.array([12., 2.])))
    for _ in range(150): u = mg.game_loop(u)
    gap = float(jnp.linalg.norm(u.pos[0] - u.pos[1])) - 0.75
    assert int(u.order[0]) == mg.FOLLOW and gap <= mg.FOLLOW_GAP + 0.15
    u = mg.game_loop(u.replace(alive=u.alive.at[1].set(False)))
    assert int(u.order[0]) == IDLE

@pytest.mark.parametrize('reading', ['point', 'follows', 'centre'])
def test_one_click_on_the_beacon(reading):
    """One Move_screen on the beacon, then no_op: one point (a move to the point, or with click_to_centre to the
    beacon's centre, even from a click on its edge), or the beacon followed on and on (move_follows)."""
    g = MoveToBeacon(sim=mg.MiniGameOptions(move_follows=reading == 'follows', click_to_centre=reading == 'centre'))
    u = make_units([MARINE, BEACON], [[4., 9.], [12., 9.]], [True, True]).replace(selected=jnp.array([True, False]))
    s = state_of(u)
    edge = mg.screen_pixel(s.units.pos[1] + jnp.array([-2.25, 0.]), 16)     # a pixel 2.37 off: on the disc, past the reach
    _, s, r, _, _ = step(g)(jax.random.PRNGKey(0), s, call(g, 331, screen=edge if reading != 'follows' else
                                                         mg.screen_pixel(s.units.pos[1], 16)))
    total = float(r)
    for k in range(1, 60):
        _, s, r, _, _ = step(g)(jax.random.PRNGKey(k), s, call(g, 0))
        total += float(r)
    assert total == {'point': 0.0, 'centre': 1.0}[reading] if reading != 'follows' else total >= 4.0
    assert int(s.units.order[0]) == (mg.FOLLOW if reading == 'follows' else IDLE)

def test_defaults_are_the_games_and_departures_are_options():
    "Issue 28: every default is the game's; the lenient departures stay available, and bad values name the setting."
    o = mg.MiniGameOptions()
    assert (o.order_queue, o.functions, o.move_follows, o.beacon_radius, o.reach_footprint) == (16, 'game', False, 1.875,
                                                                                               False)
    g = MoveToBeacon()
    _, s = g.reset(jax.random.PRNGKey(0))
    assert s.units.q_order.shape == (2, 16) and g.reach == 1.25 and float(g.radius[BEACON]) == 1.875
    for field, bad in (('beacon_radius', 0.), ('beacon_radius', -1.), ('beacon_radius', float('nan')),
                       ('beacon_radius', 'big'), ('beacon_radius', True), ('beacon_radius', 13.),
                       ('reach_footprint', 'yes'), ('reach_footprint', 1), ('click_to_centre', 'yes')):
        with pytest.raises(ValueError, match=f"MiniGameSettings.{field}") as e:
            MoveToBeacon(sim=mg.MiniGameOptions(**{field: bad}))
        assert '\n' not in str(e.value)

def test_the_beacon_is_drawn_as_real_feature_layers_draw_it():
    """The beacon's drawn radius is each game's own (MiniGame.radius, from MiniGameSettings.beacon_radius): 1.875 draws
    the discs of real renders (nicoladainese96/SC2-RL: 80 pixels, 10 across, at 64 x 64 centred on a pixel corner;
    21 pixels at 32 x 32 centred on a pixel centre); another game's radius in the same process changes nothing here."""
    def beacon_pixels(game, at):
        u = make_units([MARINE, BEACON], [[3., 3.], at], [True, True])
        pr = np.asarray(names(game, game.observe(state_of(u)))['screen/player_relative'])
        return int((pr == mg.NEUTRAL).sum()), int((pr == mg.NEUTRAL).any(0).sum())
    small = MoveToBeacon(screen_size=64, sim=mg.MiniGameOptions(beacon_radius=1.0))   # the pre-issue-28 estimate
    assert beacon_pixels(MoveToBeacon(screen_size=64), [12., 9.]) == (80, 10)
    assert beacon_pixels(MoveToBeacon(screen_size=32), [12.375, 9.375]) == (21, 5)
    assert beacon_pixels(small, [12., 9.])[1] == 6
    assert beacon_pixels(MoveToBeacon(screen_size=64), [12., 9.]) == (80, 10)
    # with move_follows, a click finds the beacon within its drawn radius (+ half a pixel): 2.2 units off its centre
    # is on the beacon at 1.875 and beside it at 1.0
    for radius, order in ((1.875, mg.FOLLOW), (1.0, MOVE)):
        g = MoveToBeacon(sim=mg.MiniGameOptions(move_follows=True, beacon_radius=radius))
        u = make_units([MARINE, BEACON], [[3., 9.], [12., 9.]], [True, True]).replace(selected=jnp.array([True, False]))
        _, s, _, _, _ = step(g)(jax.random.PRNGKey(0), state_of(u), call(g, 331, screen=mg.screen_pixel(jnp.array([14.2, 9.]), 16)))
        assert int(s.units.order[0]) == order, radius

def test_defeat_zerglings_and_banelings_rules():
    "Issue 30: the DefeatRoaches script with the map's numbers: 6 zerglings + 4 banelings, +5 a death, 4 fresh marines."
    g = mg.DefeatZerglingsAndBanelings()
    _, s = g.reset(jax.random.PRNGKey(0))
    u = s.units
    e = slice(MAX_MARINES, None)
    assert int(u.alive[:MAX_MARINES].sum()) == 9 and bool(u.selected[:9].all())
    assert list(np.asarray(u.kind[e])) == [mg.ZERGLING] * 6 + [mg.BANELING] * 4 and bool(u.alive[e].all())
    assert np.ptp(np.asarray(u.pos[e]), 0).max() == 0                      # created on one point ...
    _, s1, _, _, _ = step(g)(jax.random.PRNGKey(1), s, call(g, 0))
    p = np.asarray(s1.units.pos[e])
    d = np.linalg.norm(p[:, None] - p[None], axis=-1)[~np.eye(10, dtype=bool)]
    assert d.min() > 0.3                                                   # ... and fanned out by the separation
    # a baneling next to three marines of the column blows up: +5 for its death, 35 damage to each marine in 2.2
    b = MAX_MARINES + 6
    u1 = u.replace(pos=u.pos.at[b].set(u.pos[0] + jnp.array([0.76, 0.])), order=u.order.at[b].set(mg.ATTACK_UNIT),
                   target=u.target.at[b].set(0))
    _, s2, r, term, _ = step(g)(jax.random.PRNGKey(2), state_of(u1), call(g, 0))
    assert not bool(s2.units.alive[b]) and float(r) >= 5.0 and not bool(term)
    hit = np.asarray(s2.units.hp[:9]) <= 45 - 35 + 1e-3
    assert hit.sum() >= 3                                                  # the column: offsets 0, +-1, +-2 ...
    # the last enemy dies: a new wave of 6 + 4 and four fresh marines
    alive = u.alive.at[MAX_MARINES + 1:].set(False).at[5:9].set(False)
    u3 = u.replace(alive=alive, hp=jnp.where(alive, u.hp, -1e9).at[MAX_MARINES].set(0.5),
                   order=u.order.at[:5].set(mg.ATTACK_UNIT), target=u.target.at[:5].set(MAX_MARINES),
                   pos=u.pos.at[:5].set(u.pos[MAX_MARINES] - jnp.array([3., 0.])))
    _, s3, r, term, _ = step(g)(jax.random.PRNGKey(3), state_of(u3), call(g, 0))
    assert int(s3.units.alive[e].sum()) == 10 and int(s3.units.alive[:MAX_MARINES].sum()) == 5 + 4
    assert int(s3.extra) == 1 and float(r) >= 5.0 - 5 and not bool(term)

def test_collisions_option():
    "Issue 30: units push apart by default (MiniGameSettings.collisions); False restores the overlap; bad values named."
    u = make_units([MARINE] * 2, [[10., 8.]] * 2, [True] * 2)
    assert float(jnp.linalg.norm(mg.game_loop(u).pos[0] - mg.game_loop(u).pos[1])) > 0.3
    assert np.allclose(mg.game_loop(u, collide=False).pos, u.pos)
    assert mg.MiniGameOptions().collisions is True
    for bad in ('yes', 1):
        with pytest.raises(ValueError, match="MiniGameSettings.collisions"):
            MoveToBeacon(sim=mg.MiniGameOptions(collisions=bad))
    # the beacon is not solid: a marine on it is not pushed
    u = make_units([MARINE, BEACON], [[10., 8.], [10., 8.]], [True, True])
    assert np.allclose(mg.game_loop(u).pos, u.pos)

def test_find_and_defeat_zerglings_follows_the_map_script():
    "Issue 30: the map's start (MapScript.galaxy, Regions), its 180 s, the camera it lets move and its fog of war."
    g = mg.FindAndDefeatZerglings()
    assert g.max_steps == 180 * 16 // 8
    obs, s = g.reset(jax.random.PRNGKey(0))
    u, c = s.units, np.array(g.centre)
    m, z = np.asarray(u.pos[:3]), np.asarray(u.pos[3:])
    assert np.allclose(np.linalg.norm(m - c, axis=1), 1.0, atol=1e-5) and bool(u.selected[:3].all())
    assert list(np.asarray(u.kind)) == [MARINE] * 3 + [mg.ZERGLING] * 25 and bool(u.alive.all())
    d = np.linalg.norm(z[:, None] - z[None], axis=-1)[~np.eye(25, dtype=bool)]
    assert d.min() >= 5.0 - 1e-4                                          # each at least 5 from the others
    r = np.linalg.norm(z - c, axis=1)
    assert 8 <= r[0] <= 9 and 7.5 <= r[1] <= 9.5 and (r[2:] >= 10.5).all()   # first, the inner ring, the rest
    (x0, y0), (x1, y1) = g.playable
    assert ((z >= [x0, y0]) & (z <= [x1, y1])).all()
    # fog of war: a zergling is on the minimap only when a marine sees it; visibility 2 in sight, 0 never seen
    o = names(g, obs)
    seen = np.asarray(g.visible(u))[3:]
    assert 0 < seen.sum() < 25
    far = 3 + int(np.argmax(r))                                            # the farthest zergling: not in sight
    px = lambda p, res=16: (int((p[1] + mg.CAMERA_ORIGIN[1]) // (64 / res)), int((p[0] + mg.CAMERA_ORIGIN[0]) // (64 / res)))
    assert np.asarray(o['minimap/player_relative'])[px(np.asarray(u.pos[far]))] == 0
    assert np.asarray(o['minimap/visibility_map'])[px(c)] == 2
    assert np.asarray(o['minimap/visibility_map'])[px(np.asarray(u.pos[far]))] == 0
    # the unhidden game shows it (no fog: what the other maps render)
    g.fog = False
    try: assert np.asarray(names(g, g.observe(s))['minimap/player_relative'])[px(np.asarray(u.pos[far]))] == 4
    finally: del g.fog
    # move_camera: the screen centres on the minimap point (kept over the playable area); the marines leave the screen
    mm = 1 * 16 + 14                                                       # minimap row 1, column 14: the north-east
    _, s2, _, _, _ = step(g)(jax.random.PRNGKey(1), s, call(g, 1, minimap=mm))
    centre = np.asarray(s2.camera) + mg.SCREEN_UNITS / 2
    assert np.allclose(centre, [x1, y0])                                   # clipped to the playable corner
    o2 = names(g, g.observe(s2))
    assert (np.asarray(o2['screen/player_relative']) == 1).sum() == 0
    assert np.asarray(o2['minimap/camera']).sum() > 0 and not np.array_equal(o2['minimap/camera'], o['minimap/camera'])

def test_find_and_defeat_zerglings_rules():
    "+1 a zergling killed, -1 a marine lost, a new set of 25 when all are dead, the end when no marine is left."
    g = mg.FindAndDefeatZerglings()
    _, s = g.reset(jax.random.PRNGKey(0))
    u = s.units
    # all zerglings but one dead; that one at 0.5 HP in a marine's range: it dies, +1, and 25 new ones come
    alive = u.alive.at[4:].set(False)
    u1 = u.replace(alive=alive, hp=jnp.where(alive, u.hp, -1e9).at[3].set(0.5),
                   pos=u.pos.at[3].set(u.pos[0] + jnp.array([3., 0.])),
                   order=u.order.at[:3].set(mg.ATTACK_UNIT), target=u.target.at[:3].set(3))
    _, s1, r, term, _ = step(g)(jax.random.PRNGKey(1), s.replace(units=u1), call(g, 0))
    v = s1.units
    assert float(r) == 1.0 and not bool(term) and int(s1.extra) == 1
    assert bool(v.alive[3:].all()) and np.allclose(np.asarray(v.hp[3:]), 35.)
    m, z = np.asarray(v.pos[:3]), np.asarray(v.pos[3:])
    assert np.linalg.norm(z[:, None] - m[None], axis=-1).min() >= 9 - 1e-4   # at least 9 from every marine
    assert not (np.asarray(v.order[:3]) == mg.ATTACK_UNIT).any()            # orders on the old set ended
    # the last marine dies: -1 and the episode ends
    u2 = u.replace(alive=u.alive.at[1:3].set(False), hp=u.hp.at[0].set(0.5).at[1:3].set(-1e9),
                   pos=u.pos.at[3].set(u.pos[0] + jnp.array([0.76, 0.])),
                   order=u.order.at[3].set(mg.ATTACK_UNIT), target=u.target.at[3].set(0))
    _, s2, r, term, _ = step(g)(jax.random.PRNGKey(2), s.replace(units=u2), call(g, 0))
    assert float(r) == -1.0 and bool(term)

def test_find_and_defeat_zerglings_trains_fused(tmp_path):
    "jax:FindAndDefeatZerglings goes through the registry, the default config and the fused trainer (two updates)."
    import reaver_nb
    out = reaver_nb.train('jax:FindAndDefeatZerglings', n_envs=4, steps=4 * 16 * 2, run_id='fdz', results_dir=tmp_path,
                          verbose=False)
    assert out['frames'] == 128 and (tmp_path / 'fdz' / 'checkpoints').is_dir()

def test_call_for_help_option():
    "An attacked zergling answers its attacker either way; with call_for_help (default) a neighbour 4 away joins too."
    def after(call_for_help):
        u = make_units([MARINE, mg.ZERGLING, mg.ZERGLING], [[2., 8.], [6.5, 8.], [10.5, 8.]], [True] * 3)
        u = u.replace(order=u.order.at[0].set(mg.ATTACK_UNIT), target=u.target.at[0].set(1))
        for _ in range(3): u = mg.game_loop(u, call_for_help=call_for_help)
        return np.asarray(u.target[1:])
    assert list(after(True)) == [0, 0]
    assert list(after(False)) == [0, -1]
    with pytest.raises(ValueError, match='MiniGameSettings.call_for_help'):
        mg.FindAndDefeatZerglings(sim=mg.MiniGameOptions(call_for_help='no'))

@pytest.mark.parametrize('n', [2, 37, 75, 245, 300])   # 37, 245: passes that need a padded row
def test_the_renderers_passes_equal_one_reduction_over_all_units(n):
    "`_pixel_reductions` (narrow integers, passes of RENDER_CHUNK units, padding) against a plain int32 reduction."
    rng = np.random.default_rng(n)
    kinds = rng.choice([MARINE, ROACH, BEACON, SHARD], n)
    pos = rng.uniform(4., 8., (n, 2)).astype(np.float32)          # crowded: most pixels show several units
    u = make_units(kinds, pos, rng.random(n) < 0.8).replace(selected=jnp.asarray(rng.random(n) < 0.3))
    got = jax.jit(lambda u: render._pixel_reductions(u, None, 0., 12., 16, selected=True, count=True))(u)
    cover = np.asarray(render._cover(u.pos, mg.radii(u.kind), u.alive, 0., 12., 16))
    prio = np.where(np.asarray(mg.ARMED)[kinds], 2, 1)
    key = (prio * 8 + np.asarray(mg.KIND['owner'])[kinds]) * n + (n - 1 - np.arange(n))
    assert cover.sum(0).max() > 1                                  # ties and overlaps are exercised
    best = np.where(cover, key[:, None, None], -1).max(0)                # the top unit: highest rank, then first row
    np.testing.assert_array_equal(np.asarray(got['rank']), np.where(best >= 0, best // n, 0))
    np.testing.assert_array_equal(np.asarray(got['row']), np.where(best >= 0, n - 1 - best % n, 0))
    np.testing.assert_array_equal(np.asarray(got['selected']), (cover & np.asarray(u.selected)[:, None, None]).any(0))
    np.testing.assert_array_equal(np.asarray(got['count']), cover.sum(0))

@pytest.mark.parametrize('game', [MoveToBeacon, CollectMineralShards])
def test_maps_without_enemies_lose_nothing_by_leaving_the_fight_out(game):
    "`fights = False` (the fight's steps left out of the game loop) plays exactly as the full game loop does."
    from reaver_nb.envs.sim import ENEMY, random_policy
    lean, full = game(), type('Full', (game,), {'fights': True})()
    assert not lean.fights and full.fights
    def run(g):
        policy = random_policy(g)
        def body(s, k):
            k1, k2 = jax.random.split(k)
            return g.step(k2, s, policy(s, k1))[1], None
        s = g.reset(jax.random.PRNGKey(3))[1]
        assert not bool((np.asarray(mg.KIND['owner'])[np.asarray(s.units.kind)] == ENEMY).any())
        return jax.jit(lambda s: jax.lax.scan(body, s, jax.random.split(jax.random.PRNGKey(4), 60))[0])(s)
    for a, b in zip(jax.tree.leaves(run(lean)), jax.tree.leaves(run(full))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize('name, call_for_help', [('DefeatRoaches', True), ('DefeatZerglingsAndBanelings', True),
                                                 ('FindAndDefeatZerglings', True), ('DefeatRoaches', False)])
def test_the_two_sides_fight_plays_as_every_pair_does(name, call_for_help):
    """`MiniGame.own_rows` (the fight's tables pair the player's rows with the enemy's only) plays exactly as the
    tables over every pair of rows do: scripted and random play, 40 steps each, every state array equal."""
    sim = mg.MiniGameOptions(call_for_help=call_for_help)
    sides, every = mg.MINIGAMES[name](sim=sim), type('EveryPair', (mg.MINIGAMES[name],), {'own_rows': None})(sim=sim)
    assert sides.own_rows is not None and every.own_rows is None
    def run(g):
        def body(pol):
            def f(s, k):
                k1, k2 = jax.random.split(k)
                return g.step(k2, s, pol(s, k1))[1], None
            return f
        s0 = g.reset(jax.random.PRNGKey(5))[1]
        return jax.jit(lambda s: [jax.lax.scan(body(pol), s, jax.random.split(jax.random.PRNGKey(6), 40))[0]
                                  for pol in (mg.scripted_policy(g), mg.random_policy(g))])(s0)
    a, b = run(sides), run(every)
    assert float(a[0].score) != 0.                     # the scripted play fought
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_new_set_of_shards_ends_orders_on_the_old_one():
    """With `move_follows`, a marine walking onto the last shard of a set, and one with a walk onto it queued, do not
    walk on to the new shard the respawn puts in its row: the game spawns new units, and an order on a unit that is
    gone ends (the queued one when it comes up)."""
    g = CollectMineralShards(sim=mg.MiniGameOptions(move_follows=True))
    s = g.reset(jax.random.PRNGKey(0))[1]
    last = 2 + N_SHARDS - 1
    rows = jnp.arange(2 + N_SHARDS)
    u = s.units.replace(alive=(rows < 2) | (rows == last),     # one shard left, marine 0 on it: the set ends
                        pos=s.units.pos.at[0].set(s.units.pos[last]),
                        order=s.units.order.at[:2].set(mg.FOLLOW), target=s.units.target.at[:2].set(last),
                        q_order=s.units.q_order.at[1, 0].set(mg.FOLLOW), q_target=s.units.q_target.at[1, 0].set(last))
    _, s2, r, _, _ = step(g)(jax.random.PRNGKey(1), state_of(u), call(g, 0))
    v = s2.units
    assert float(r) >= 1. and int(v.alive[2:].sum()) >= N_SHARDS - 2    # the last shard taken, a new set of 20
    assert int(v.order[0]) == IDLE and int(v.target[0]) == -1
    assert (np.asarray(v.target[:2]) != last).all() and (np.asarray(v.q_target) != last).all()


def _pick_points_reference(cand, away, min_dist, hole=None):
    "The map scripts' rule, plainly: each point's first try at least min_dist from every `away` point (and outside the hole), else its farthest allowed try (the first of equals)."
    out = []
    for tries in np.asarray(cand, np.float64):
        d = np.sqrt(((tries[:, None] - np.asarray(away)[None]) ** 2).sum(-1)).min(1)
        allowed = np.ones(len(tries), bool) if hole is None else np.hypot(*(tries - hole[0]).T) >= hole[1]
        good = np.flatnonzero(allowed & (d >= min_dist))
        out.append(tries[good[0]] if len(good) else tries[np.argmax(np.where(allowed, d, -1.))])
    return np.array(out)


@pytest.mark.parametrize('n_away, min_dist, hole', [(1, 5., None), (2, 2., None), (3, 9., ((12., 9.), 4.)),
                                                     (2, 30., None), (1, 30., ((12., 9.), 30.)), (1, 0., None)])
def test_pick_points_takes_the_first_good_try_else_the_farthest(n_away, min_dist, hole):
    "`pick_points` (a cheap form on a CPU: one maximum and one first-index reduction) against the plain rule, cases with no good try and no allowed try included."
    game = CollectMineralShards()
    k1, k2 = jax.random.split(jax.random.PRNGKey(n_away * 7 + int(min_dist)))
    cand = game.candidate_points(k1, 20)
    away = jax.random.uniform(k2, (n_away, 2), minval=2., maxval=16.)
    h = None if hole is None else (jnp.asarray(hole[0]), hole[1])
    got = jax.jit(lambda c, a: game.pick_points(c, a, min_dist, h))(cand, away)
    ref = _pick_points_reference(cand, away, min_dist, None if hole is None else (np.asarray(hole[0]), hole[1]))
    np.testing.assert_allclose(np.asarray(got), ref, rtol=0, atol=1e-6)


def test_old_runs_configs_still_bind_the_simulations_options():
    """Issue 50 moved the simulation to reaver_nb.envs.sim; gin's name for its options keeps the old module, so an old
    run's config.gin (bare `MiniGameSettings.*` or the module-qualified name) still binds them."""
    import gin
    with gin.unlock_config():
        gin.parse_config(['issue50/MiniGameSettings.order_queue = 3',
                          'issue50/reaver_nb.envs.minigames.MiniGameSettings.collisions = False'])
    with gin.config_scope('issue50'):
        o = mg.MiniGameSettings()
    assert (o.order_queue, o.collisions) == (3, False)
    assert mg.MiniGameSettings().order_queue == 16                      # outside the scope: the defaults
