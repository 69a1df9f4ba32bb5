"End-to-end training on each env family, the compile-once contract, and a real (small) learning check."
import json
import numpy as np
import jax
import pytest
import reaver_nb
from reaver_nb.envs.registry import make_vector_env
from reaver_nb.agents.actor_critic import ActorCriticAgent, A2C, PPO
from reaver_nb.training.host import Collector
from conftest import reaver


@pytest.mark.parametrize('hp', [A2C(traj_len=8), PPO(traj_len=8, minibatch_size=16)])
def test_each_function_compiles_once(hp):
    venv = make_vector_env('CartPole-v1', 4)
    agent = ActorCriticAgent(venv.obs_spec, venv.act_spec, hp, 4, total_updates=10)
    state = agent.init(jax.random.PRNGKey(0))
    col, obs = Collector(venv, agent), venv.reset(seed=0)
    key = state.key
    for _ in range(5):
        ro, obs, key, _ = col.collect(state.params, obs, key)
        state, m = agent.update(state, ro)
    venv.close()
    assert agent.traces['update'] == 1 and agent.traces['act'] == 1 and agent.traces['value'] <= 1
    assert int(state.update) == 5


@pytest.mark.parametrize('agent', ['a2c', 'ppo'])
def test_continuous_actions_mujoco(agent, tmp_path):
    out = reaver_nb.train('InvertedPendulum-v5', agent, n_envs=2, steps=1024, run_id='ip', results_dir=tmp_path,
                          gin_params=['PPO.traj_len = 64', 'PPO.minibatch_size = 64'], verbose=False)
    assert out['frames'] == 1024
    ev = reaver_nb.test('ip', episodes=3, results_dir=tmp_path, verbose=False)
    assert ev['episodes'] == 3
    # mujoco.gin normalises observations: the running statistics saw every training observation
    from reaver_nb.training.checkpoint import load_checkpoint, latest_checkpoint
    stats = load_checkpoint(latest_checkpoint(tmp_path / 'ip' / 'checkpoints'), None)['state']['params']['obs_stats']
    assert int(stats['obs_count_0']) == 1024 and np.all(np.asarray(stats['obs_var_0']) > 0)


def test_atari_pong_pipeline(tmp_path):
    "Pong end to end: 84x84x4 uint8 frames through the Nature CNN, updates, a checkpoint and a test episode."
    r = reaver('train', '--env', 'ALE/Pong-v5', '--agent', 'ppo', '--n-envs', 2, '--steps', 512, '--run-id', 'pong',
               '--results-dir', tmp_path, '--gin-param', 'PPO.traj_len = 64', '--gin-param', 'PPO.minibatch_size = 64',
               '--gin-param', 'RunSettings.log_every = 2')
    assert r.returncode == 0, r.stderr
    assert 'Fr' in r.stdout and (tmp_path / 'pong' / 'checkpoints').exists()
    row = json.loads((tmp_path / 'pong' / 'metrics.jsonl').read_text().splitlines()[-1])
    assert np.isfinite(row['loss']) and row['frames'] == 512


def test_ppo_learns_cartpole(tmp_path):
    "A real, short run with the shipped CartPole config: PPO must clearly learn within 60k steps."
    out = reaver_nb.train('CartPole-v1', 'ppo', steps=60_000, seed=0, run_id='learn', results_dir=tmp_path,
                          verbose=False)
    ev = reaver_nb.test('learn', episodes=20, results_dir=tmp_path, verbose=False)
    assert ev['mean'] > 150, ev['mean']


def test_cli_test_render_and_python_m(tmp_path):
    r = reaver('train', '--env', 'CartPole-v1', '--steps', 512, '--n-envs', 4, '--run-id', 'cli', '--results-dir',
               tmp_path, '--gin-param', 'PPO.minibatch_size = 32', '--quiet')
    assert r.returncode == 0, r.stderr
    r = reaver('test', '--run-id', 'cli', '--episodes', 5, '--render', '--results-dir', tmp_path)
    assert r.returncode == 0, r.stderr
    ev = json.loads((tmp_path / 'cli' / 'evaluation.json').read_text())
    assert ev['episodes'] == 5 and ev['video'].endswith('.gif')
    r = reaver('test', '--run-id', 'missing', '--results-dir', tmp_path)
    assert r.returncode == 2 and 'No run' in r.stderr


def test_every_shipped_config_trains_ppo_as_shipped():
    "PPO's minibatch divides the batch (n_envs x traj_len) under every shipped config, so `--agent ppo` starts."
    from reaver_nb.training.config import CONFIG_DIR, RunSettings, config_files, parse_config
    maps = sorted(p.stem for p in (CONFIG_DIR / 'sc2').glob('*.gin'))
    envs = maps + ['jax:MoveToBeacon', 'jax:CollectMineralShards', 'jax:FindAndDefeatZerglings', 'jax:DefeatRoaches',
                   'jax:DefeatZerglingsAndBanelings', 'CartPole-v1',
                   'gymnax:CartPole-v1', 'ALE/Pong-v5', 'InvertedPendulum-v5']
    bad = []
    try:
        for env in envs:
            parse_config(config_files(env))
            n, hp = RunSettings().n_envs, PPO()
            if (n * hp.traj_len) % hp.minibatch_size: bad.append((env, n, hp.traj_len, hp.minibatch_size))
    finally:
        import gin; gin.clear_config()
    assert not bad, bad
