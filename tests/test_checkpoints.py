"Checkpoints: atomic under SIGKILL, exact round trip, resume continues counters and RNG, initialize-from."
import json, os, signal, subprocess, sys, textwrap, time, random
import numpy as np
import jax
import pytest
import reaver_nb
from reaver_nb.training.checkpoint import list_checkpoints, latest_checkpoint, load_checkpoint

WRITER = textwrap.dedent('''
    import sys, numpy as np
    from reaver_nb.training.checkpoint import save_checkpoint
    big = np.random.default_rng(0).normal(size=(2_000_000,)).astype(np.float32)   # 8 MB per checkpoint
    step = 0
    while True:
        step += 1
        save_checkpoint(sys.argv[1], step, dict(w=big + step, step=np.int64(step)), keep=2)
        print(step, flush=True)
''')

def test_kill_9_during_saves_leaves_a_loadable_checkpoint(tmp_path):
    rng = random.Random(0)
    for trial in range(5):
        d = tmp_path / f'ck{trial}'
        p = subprocess.Popen([sys.executable, '-c', WRITER, str(d)], stdout=subprocess.PIPE, text=True)
        p.stdout.readline()                       # at least one complete checkpoint
        time.sleep(rng.uniform(0.0, 0.3))
        p.send_signal(signal.SIGKILL); p.wait()
        last = latest_checkpoint(d)
        ck = load_checkpoint(last, None)
        assert np.allclose(ck['w'][:3] - int(ck['step']), np.random.default_rng(0).normal(size=3), atol=1e-3)


def test_resume_restores_state_exactly_and_continues(tmp_path):
    res = tmp_path / 'results'
    gp = ['PPO.minibatch_size = 32', 'RunSettings.log_every = 4']
    reaver_nb.train('CartPole-v1', n_envs=4, steps=2048, seed=3, run_id='r', results_dir=res, gin_params=gp,
                    verbose=False)
    first = load_checkpoint(latest_checkpoint(res / 'r' / 'checkpoints'), None)
    before = (res / 'r' / 'metrics.jsonl').read_text().splitlines()
    out = reaver_nb.train(run_id='r', resume=True, steps=4096, results_dir=res, verbose=False)
    batch = 32 * 4                                     # CartPole-v1.gin: PPO.traj_len = 32; 4 envs
    assert (out['frames'], out['updates']) == (4096, 4096 // batch)
    rows = (res / 'r' / 'metrics.jsonl').read_text().splitlines()
    assert rows[:len(before)] == before and len(rows) > len(before)   # appended, not rewritten
    frames = [json.loads(l)['frames'] for l in rows]
    assert frames == sorted(set(frames)) and frames[len(before) - 1] == 2048 and frames[-1] == 4096
    # the resumed run continued the saved optimizer state and counters
    second = load_checkpoint(latest_checkpoint(res / 'r' / 'checkpoints'), None)
    assert int(second['state']['update']) == int(first['state']['update']) + 2048 // batch
    assert int(second['state']['opt_state']['1']['0']['count']) == int(first['state']['opt_state']['1']['0']['count']) * 2
    assert 'RunSettings.seed = 3' in (res / 'r' / 'config.gin').read_text()


def test_initialize_from_copies_weights_not_optimizer(tmp_path):
    res = tmp_path / 'results'
    gp = ['PPO.minibatch_size = 32']
    reaver_nb.train('CartPole-v1', n_envs=4, steps=1024, run_id='src', results_dir=res, gin_params=gp, verbose=False)
    src = load_checkpoint(latest_checkpoint(res / 'src' / 'checkpoints'), None)
    reaver_nb.train('CartPole-v1', n_envs=4, steps=128, run_id='dst', results_dir=res, gin_params=gp, verbose=False,
                    initialize_from='src', seed=9)
    dst = load_checkpoint(latest_checkpoint(res / 'dst' / 'checkpoints'), None)
    assert int(dst['state']['update']) == 1 and int(dst['frames']) == 128
    a = jax.tree.leaves(src['state']['params']); b = jax.tree.leaves(dst['state']['params'])
    # one small update away from the source weights, far from a fresh initialisation
    assert max(float(np.abs(np.asarray(x) - np.asarray(y)).max()) for x, y in zip(a, b)) < 0.05


def _params(run):
    ck = load_checkpoint(latest_checkpoint(run / 'checkpoints'), None)
    return [np.asarray(x) for x in jax.tree.leaves(ck['state']['params'])]


def test_same_seed_same_run_and_resume_is_deterministic(tmp_path):
    "Runs are reproducible: same seed, same weights; two resumes of one checkpoint continue identically."
    import shutil
    res = tmp_path / 'results'
    gp = ['PPO.minibatch_size = 32']
    for rid in ('a', 'b'):
        reaver_nb.train('CartPole-v1', n_envs=4, steps=1024, seed=5, run_id=rid, results_dir=res, gin_params=gp,
                        verbose=False)
    assert all(np.array_equal(x, y) for x, y in zip(_params(res / 'a'), _params(res / 'b')))
    shutil.copytree(res / 'a', res / 'a2')
    for rid in ('a', 'a2'):
        reaver_nb.train(run_id=rid, resume=True, steps=2048, results_dir=res, verbose=False)
    assert all(np.array_equal(x, y) for x, y in zip(_params(res / 'a'), _params(res / 'a2')))
    assert not all(np.array_equal(x, y) for x, y in zip(_params(res / 'a'), _params(res / 'b')))
