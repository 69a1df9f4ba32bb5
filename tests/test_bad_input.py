"Bad input gets a clear error and loses nothing."
import json, os, signal, subprocess, sys, time
from pathlib import Path
import gymnasium as gym
import numpy as np
import jax
import pytest
import reaver_nb
from reaver_nb.training.config import ConfigError
from reaver_nb.training.checkpoint import latest_checkpoint, list_checkpoints, load_checkpoint
from conftest import reaver

TINY = ['RunSettings.log_every = 1', 'PPO.minibatch_size = 32']


def test_unknown_env_names_close_matches(results):
    r = reaver('train', '--env', 'CartPol-v1', '--results-dir', results)
    assert r.returncode == 2
    assert 'Unknown environment id' in r.stderr and 'CartPole-v1' in r.stderr
    assert 'Traceback' not in r.stderr
    assert not results.exists()


def test_bad_simulation_or_agent_setting_is_named_before_anything_is_written(results):
    for binding, named in (("MiniGameSettings.functions = 'al'", 'MiniGameSettings.functions'),
                           ('MiniGameSettings.order_queue = 0', 'MiniGameSettings.order_queue'),
                           ("MiniGameSettings.move_follows = 'yes'", 'MiniGameSettings.move_follows'),
                           ('MiniGameSettings.click_to_centre = True\nMiniGameSettings.move_follows = True',
                            'set at most one'),
                           ("A2C.head_entropy = (('queud', 0.05),)", "['queud']"),   # A2C: the default's agent
                           ("A2C.head_entropy = ('queued', 0.05)", 'pairs'),
                           ('A2C.entropy_decay_frames = -5', 'A2C.entropy_decay_frames = -5 is out of range'),
                           ('HeadRestart.min_return = -1.0', 'HeadRestart.min_return'),
                           ('HeadRestart.every = -2', 'HeadRestart.every'),
                           ("HeadRestart.agents = ('a3c',)", "HeadRestart.agents names ['a3c']"),
                           ('HeadRestart.at = 0\nHeadRestart.min_return = 0.0', 'HeadRestart.at')):
        # (the default restarts queued for A2C: at HeadRestart.at frames, once the return reaches min_return)
        r = reaver('train', *[a for b in binding.split('\n') for a in ('--gin-param', b)], '--results-dir', results)
        assert r.returncode == 2 and named in r.stderr and 'Traceback' not in r.stderr, r.stderr
        assert not results.exists()


def test_bad_gin_binding_names_file_and_binding(results, tmp_path):
    bad = tmp_path / 'my_settings.gin'
    bad.write_text('PPO.n_epochs = 4\nPPO.learning_rat = 1e-3\n')
    with pytest.raises(ConfigError) as e:
        reaver_nb.train('CartPole-v1', steps=256, run_id='x', results_dir=results, gin_files=[bad])
    assert 'my_settings.gin' in str(e.value) and 'learning_rat' in str(e.value) and 'line 2' in str(e.value)
    with pytest.raises(ConfigError, match="Bad gin binding 'PPO.n_epoch = 4'"):
        reaver_nb.train('CartPole-v1', steps=256, run_id='x', results_dir=results, gin_params=['PPO.n_epoch = 4'])
    assert not (results / 'x').exists()
    r = reaver('train', '--gin-file', bad, '--results-dir', results)
    assert r.returncode == 2 and 'my_settings.gin' in r.stderr


def test_existing_run_refused_nothing_overwritten(results):
    reaver_nb.train('CartPole-v1', n_envs=4, steps=1024, run_id='keep', results_dir=results, gin_params=TINY,
                    verbose=False)
    run = results / 'keep'
    before = {p: p.read_bytes() for p in run.rglob('*') if p.is_file()}
    with pytest.raises(FileExistsError, match='--resume'):
        reaver_nb.train('CartPole-v1', n_envs=4, steps=1024, run_id='keep', results_dir=results, gin_params=TINY)
    r = reaver('train', '--run-id', 'keep', '--results-dir', results, '--steps', 1024)
    assert r.returncode == 2 and 'already exists' in r.stderr
    after = {p: p.read_bytes() for p in run.rglob('*') if p.is_file()}
    assert before == after
    # --force starts over, --resume continues
    out = reaver_nb.train('CartPole-v1', n_envs=4, steps=1024, run_id='keep', results_dir=results, gin_params=TINY,
                          force=True, verbose=False)
    assert out['frames'] == 1024
    with pytest.raises(FileNotFoundError, match='no run'):
        reaver_nb.train(run_id='nothing-here', resume=True, results_dir=results)


class NaNAfter(gym.Env):
    "Random observations; the reward turns NaN after 150 steps of this env (episodes last 50)."
    observation_space = gym.spaces.Box(-1, 1, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)
    def __init__(self): self.steps = 0
    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}
    def step(self, a):
        self.steps += 1
        r = float('nan') if self.steps > 150 else 1.0
        return self.np_random.uniform(-1, 1, 4).astype(np.float32), r, False, False, {}

gym.register('NaNAfter-v0', entry_point=NaNAfter, max_episode_steps=50)


def test_nan_loss_stops_and_keeps_last_good_checkpoint(results):
    with pytest.raises(FloatingPointError, match='Loss became nan') as e:
        reaver_nb.train('NaNAfter-v0', n_envs=4, steps=100_000, run_id='nan', results_dir=results, verbose=False,
                        gin_params=TINY + ['RunSettings.checkpoint_every = 5'])
    assert '--resume' in str(e.value)
    ckpts = list_checkpoints(results / 'nan' / 'checkpoints')
    assert ckpts
    agent_state = load_checkpoint(ckpts[-1], None)   # raw state dict
    leaves = jax.tree.leaves(agent_state['state']['params'])
    assert leaves and all(np.isfinite(np.asarray(x)).all() for x in leaves)
    assert 0 < int(agent_state['frames']) <= 4 * 150   # 4 envs: the NaN arrives after 600 frames


def test_ctrl_c_saves_a_checkpoint(results):
    p = subprocess.Popen([sys.executable, '-m', 'reaver_nb', 'train', '--env', 'CartPole-v1', '--steps', '100000000',
                          '--run-id', 'sigint', '--results-dir', str(results), '--gin-param', 'RunSettings.log_every = 10'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = results / 'sigint' / 'train.log'
    deadline = time.time() + 120
    while time.time() < deadline and not (log.exists() and log.read_text().count('\n') >= 2): time.sleep(0.2)
    assert not list_checkpoints(results / 'sigint' / 'checkpoints')   # none yet: the interval is 1000 updates
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (out, err)
    assert 'checkpoint saved' in out and '--resume' in out
    ckpt = latest_checkpoint(results / 'sigint' / 'checkpoints')
    assert ckpt is not None and int(load_checkpoint(ckpt, None)['frames']) > 0
    r = subprocess.run([sys.executable, '-m', 'reaver_nb', 'train', '--run-id', 'sigint', '--resume', '--steps', '40960',
                        '--results-dir', str(results), '--quiet'], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_a_new_run_that_fails_before_logging_leaves_no_run_directory(results, monkeypatch):
    "A failure while building or compiling (here: the first update raises) must not leave a folder blocking the id."
    from reaver_nb.training.fused import FusedTrainer
    def boom(*a, **kw): raise RuntimeError('compile failed')
    monkeypatch.setattr(FusedTrainer, 'run', boom)
    with pytest.raises(RuntimeError, match='compile failed'):
        reaver_nb.train('jax:MoveToBeacon', n_envs=4, steps=256, run_id='fails', results_dir=results, verbose=False,
                        gin_params=['A2C.traj_len = 8', 'SC2Settings.screen_size = 8', 'SC2Settings.minimap_size = 8'])
    assert not (results / 'fails').exists()


def test_resume_after_a_kill_repeats_no_metrics_row_and_clears_partial_checkpoints(results):
    "What a run killed after its last checkpoint leaves behind (rows past it, a half-written checkpoint) is cleared."
    reaver_nb.train('CartPole-v1', n_envs=4, steps=1024, run_id='k', results_dir=results, gin_params=TINY, verbose=False)
    run = results / 'k'
    rows = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines()]
    last = int(load_checkpoint(latest_checkpoint(run / 'checkpoints'), None)['frames'])
    with open(run / 'metrics.jsonl', 'a') as f:          # the killed run logged past its checkpoint, then died
        f.write(json.dumps(dict(rows[-1], frames=last + 128)) + '\n' + '{"frames": ')
    (run / 'checkpoints' / f'.ckpt_{last + 128:010d}.msgpack.x1y2.tmp').write_bytes(b'half')
    reaver_nb.train(run_id='k', resume=True, steps=2048, results_dir=results, verbose=False)
    frames = [json.loads(l)['frames'] for l in (run / 'metrics.jsonl').read_text().splitlines()]
    assert frames == sorted(set(frames)) and frames[-1] == 2048, frames
    assert not list((run / 'checkpoints').glob('.*.tmp'))
