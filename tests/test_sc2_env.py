"""The StarCraft II adapter and FullyConv on pysc2's mock game: Specs, masking, pysc2's own action validation, and
short A2C / PPO runs through the full multi-head policy."""
import json
import numpy as np
import jax
import pytest

pytest.importorskip('pysc2')
from reaver_nb.sc2.compat import import_pysc2
import_pysc2()
from pysc2.env import mock_sc2_env, sc2_env
from pysc2.lib import features
from reaver_nb.envs.sc2 import SC2Env, SC2Options, function_ids
from reaver_nb.agents.actor_critic import ActorCriticAgent, A2C
from conftest import reaver


class ShuffledAvailability(mock_sc2_env.SC2TestEnv):
    "The mock game, offering a random subset of functions each step (no_op always), like a real game's changing UI."
    def __init__(self, **kw):
        super().__init__(**kw)
        self._rng = np.random.default_rng(0)
        self.episode_length = 25

    def step(self, actions, step_mul=None):
        ts = super().step(actions, step_mul)
        pool = np.array(function_ids('minigames_all'))
        avail = np.unique(np.r_[0, self._rng.choice(pool, size=self._rng.integers(1, 12), replace=False)])
        return [t._replace(observation={**t.observation, 'available_actions': avail}) for t in ts]


def _validator(env: SC2Env):
    "pysc2's Features for this interface, whose availability check reads the observation the action answers."
    aif = env._interface()
    from pysc2.lib import point
    feats = features.Features(agent_interface_format=aif, map_size=point.Point(64, 64))
    return feats


@pytest.mark.parametrize('functions', ['minigames', 'minigames_all'])
def test_every_emitted_action_passes_pysc2_validation(functions):
    env = SC2Env('MoveToBeacon', make_game=ShuffledAvailability, functions=functions, screen_size=16, minimap_size=16)
    agent = ActorCriticAgent(env.obs_spec, env.act_spec, A2C(), n_envs=1)
    state = agent.init(jax.random.PRNGKey(0))
    feats = _validator(env)
    obs, key = env.reset(), jax.random.PRNGKey(1)
    used = set()
    for t in range(300):
        answered = env.last_observation
        a, _, _, key = agent.act(state.params, tuple(x[None] for x in obs), key)
        a = tuple(np.asarray(x)[0] for x in a)
        call = env.function_call(a)
        assert call.function in answered['available_actions'], (call, answered['available_actions'])
        feats.available_actions = lambda _obs, avail=answered['available_actions']: avail
        feats.transform_action(None, call, skip_available=False)  # raises ValueError on anything the game rejects
        used.add(int(call.function))
        obs, r, term, trunc = env.step(a)
        for s, x in zip(env.obs_spec, obs): assert s.contains(x), s
        if term or trunc: obs = env.reset()
    env.close()
    assert len(used) > 5, used  # the policy explored many functions, each validated


def test_unavailable_functions_never_sampled():
    env = SC2Env('MoveToBeacon', make_game=mock_sc2_env.SC2TestEnv)
    obs = env.reset()
    avail_row = obs[env.obs_spec.names.index('available_actions')]
    agent = ActorCriticAgent(env.obs_spec, env.act_spec, A2C(), n_envs=10_000)
    state = agent.init(jax.random.PRNGKey(0))
    batch = tuple(np.repeat(x[None], 10_000, 0) for x in obs)
    a, logp, _, _ = agent.act(state.params, batch, jax.random.PRNGKey(3))
    fn = np.asarray(a[0])
    assert avail_row[fn].all(), np.unique(fn[avail_row[fn] == 0])
    assert np.isfinite(np.asarray(logp)).all()
    assert len(np.unique(fn)) == int(avail_row.sum())  # and every available one is reachable
    env.close()


def test_specs_follow_settings():
    env = SC2Env('MoveToBeacon', make_game=mock_sc2_env.SC2TestEnv, screen_size=24, minimap_size=24,
                 screen_features=('player_relative', 'unit_type'), minimap_features=('camera',))
    obs = env.reset()
    assert env.obs_spec.names[:3] == ['screen/player_relative', 'screen/unit_type', 'minimap/camera']
    for s, x in zip(env.obs_spec, obs): assert s.contains(x), s
    assert env.act_spec['screen'].n == 24 * 24
    env.close()
    with pytest.raises(ValueError, match='Unknown screen feature'):
        SC2Env('MoveToBeacon', screen_features=('player_relativ',))


@pytest.mark.parametrize('agent,params', [
    ('a2c', []),
    ('ppo', ['PPO.traj_len = 8', 'PPO.minibatch_size = 32', 'PPO.n_epochs = 2']),
])
def test_short_training_on_the_mock_game(agent, params, results):
    args = ['train', '--env', 'MoveToBeacon', '--agent', agent, '--n-envs', '4', '--steps', '256',
            '--results-dir', results, '--run-id', agent, '--gin-param', 'SC2Settings.mock = True',
            '--gin-param', 'A2C.traj_len = 8']
    for p in params: args += ['--gin-param', p]
    out = reaver(*args, timeout=600)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(l) for l in (results / agent / 'metrics.jsonl').read_text().splitlines()]
    assert rows and all(np.isfinite(rows[-1][k]) for k in ('policy_loss', 'value_loss', 'entropy'))
    assert (results / agent / 'checkpoints').exists()
    ev = reaver('test', '--run-id', agent, '--results-dir', results, '--episodes', '4', timeout=600)
    assert ev.returncode == 0, ev.stderr
