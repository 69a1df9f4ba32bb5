"""The pysc2 drop-in (`reaver_nb.envs.pysc2_env.SC2Env`, nbs/25) and a trained run as a pysc2 agent
(`reaver_nb.pysc2_agent`, nbs/26): pysc2's own agents play it unchanged through `run_loop`, envs built in a parent
play in forked workers and spawned workers build their own, and a run plays both the drop-in and pysc2's mock game.
A few episodes each: the 100-episode table is `tools/pysc2_agents.py`'s."""
import multiprocessing as mp
import subprocess, sys, textwrap
import numpy as np
import pytest

sc2_env = pytest.importorskip('reaver_nb.envs.pysc2_env')   # needs the [sc2] extra (pysc2)
from pysc2.agents import random_agent, scripted_agent
from pysc2.env import run_loop
from pysc2.lib import actions


def make(map_name='MoveToBeacon', seed=0, **kw):
    aif = sc2_env.parse_agent_interface_format(feature_screen=16, feature_minimap=16,
                                               use_feature_units=kw.pop('feature_units', False))
    return sc2_env.SC2Env(map_name=map_name, players=[sc2_env.Agent(sc2_env.Race.terran)], agent_interface_format=aif,
                          random_seed=seed, **kw)


@pytest.mark.parametrize('map_name, agent, feature_units, lo, hi', [
    ('MoveToBeacon', scripted_agent.MoveToBeacon, False, 20, 32),    # real game: 25.87 +- 1.91 (1000 episodes)
    ('CollectMineralShards', scripted_agent.CollectMineralShards, False, 60, 130),
    ('CollectMineralShards', scripted_agent.CollectMineralShardsFeatureUnits, True, 70, 140),
    ('DefeatRoaches', scripted_agent.DefeatRoaches, False, 0, 200)])
def test_pysc2_scripted_agents_play_unchanged(map_name, agent, feature_units, lo, hi):
    env = make(map_name, feature_units=feature_units)
    run_loop.run_loop([agent()], env, max_episodes=2)
    assert len(env.episode_scores) == 2 and lo <= np.mean(env.episode_scores) <= hi, env.episode_scores


@pytest.mark.parametrize('map_name', list(sc2_env.MINIGAMES))
def test_pysc2_random_agent_plays_every_map(map_name):
    """RandomAgent, unchanged: every function it picks from `available_actions` and every argument it draws within
    the action spec's sizes passes pysc2's checks (episodes cut at 400 game loops: 50 steps)."""
    np.random.seed(0)
    env = make(map_name, game_steps_per_episode=400)
    agent = random_agent.RandomAgent()
    run_loop.run_loop([agent], env, max_episodes=2)
    assert len(env.episode_scores) == 2 and agent.steps >= 2


def test_timesteps_as_pysc2_gives_them():
    env = make('MoveToBeacon', game_steps_per_episode=80)
    ts, = env.reset()
    assert (ts.first(), ts.reward, ts.discount, ts.observation.game_loop.tolist()) == (True, 0., 0., [0])
    types = [env.step([actions.FUNCTIONS.no_op()])[0] for _ in range(10)]
    assert [t.step_type for t in types] == [1] * 9 + [2] and types[-1].discount == 1.   # cut by game_steps: discount
    assert env.step([actions.FUNCTIONS.no_op()])[0].first()                            # a step after LAST: a reset


def test_pysc2_errors_for_bad_calls():
    env = make()
    env.reset()
    with pytest.raises(ValueError, match='Function 331/Move_screen is currently not available'):
        env.step([actions.FUNCTIONS.Move_screen('now', [3, 3])])
    with pytest.raises(ValueError, match='Wrong number of arguments'):
        env.step([actions.FunctionCall(7, [])])
    with pytest.raises(sc2_env.NotSimulatedError, match="'unit_density_aa' is not simulated"):
        env.step([actions.FUNCTIONS.no_op()])[0].observation.feature_screen.unit_density_aa


FRESH = textwrap.dedent("""
    import multiprocessing as mp
    from reaver_nb.envs import pysc2_env as sc2_env
    from pysc2.agents import scripted_agent
    from pysc2.env import run_loop
    from jax._src import xla_bridge

    def make():
        return sc2_env.SC2Env(map_name='MoveToBeacon', players=[sc2_env.Agent(sc2_env.Race.terran)], random_seed=3,
                              agent_interface_format=sc2_env.parse_agent_interface_format(feature_screen=16, feature_minimap=16))

    def play(q, env=None):
        env = env or make()
        run_loop.run_loop([scripted_agent.MoveToBeacon()], env, max_episodes=1)
        q.put(env.episode_scores)

    if __name__ == '__main__':
        parent = make()
        assert not xla_bridge.backends_are_initialized(), 'building an env ran JAX'
        out = {}
        for method in ('fork', 'spawn'):
            ctx = mp.get_context(method); q = ctx.Queue()
            p = ctx.Process(target=play, args=(q, parent) if method == 'fork' else (q,)); p.start()
            out[method] = q.get(timeout=600); p.join(60)
        assert not xla_bridge.backends_are_initialized(), 'the parent ran JAX'
        print(out)
""")


def test_envs_play_in_forked_and_spawned_workers(tmp_path):
    """SC2-RL builds its envs in the parent, then starts workers with fork (A2C's default start method, IMPALA's
    explicit context): the parent's env plays in a forked worker, a spawned worker builds and plays its own, and the
    parent never starts JAX (a fresh process, as a training script is)."""
    script = tmp_path / 'workers.py'
    script.write_text(FRESH)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    scores = eval(out.stdout.strip().splitlines()[-1])
    assert scores['fork'] == scores['spawn'] and 20 <= scores['fork'][0] <= 32, scores   # the same seed, the same game


def test_a_trained_run_plays_as_a_pysc2_agent(tmp_path):
    """A (tiny) run trained on jax:MoveToBeacon plays through run_loop on the drop-in and on pysc2's mock game, and
    `reaver test --env MoveToBeacon` plays it through the pysc2 adapter on the mock game: the Specs match."""
    import reaver_nb
    from reaver_nb.pysc2_agent import Pysc2Agent, test_on_env
    from pysc2.env import mock_sc2_env
    reaver_nb.train('jax:MoveToBeacon', 'ppo', steps=2048, seed=0, run_id='tiny', results_dir=tmp_path, verbose=False)
    agent = Pysc2Agent('tiny', results_dir=tmp_path)
    env = make()
    run_loop.run_loop([agent], env, max_episodes=1)
    assert len(env.episode_scores) == 1 and agent.steps == 241
    mock = mock_sc2_env.SC2TestEnv(map_name='MoveToBeacon', players=[sc2_env.Agent(sc2_env.Race.terran)],
                                   agent_interface_format=sc2_env.parse_agent_interface_format(feature_screen=16, feature_minimap=16))
    run_loop.run_loop([agent], mock, max_episodes=1)
    ev = test_on_env('tiny', 'MoveToBeacon', episodes=2, results_dir=tmp_path, n_envs=1, verbose=False,
                     gin_params=['SC2Settings.mock = True'])
    assert ev['episodes'] == 2 and ev['trained_on'] == 'jax:MoveToBeacon'
