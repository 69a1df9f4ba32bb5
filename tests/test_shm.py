"ShmVectorEnv: same trajectories as in-process, worker faults, clean exits, scripts / python -m."
import os, random, re, signal, subprocess, sys, textwrap, threading, time, warnings
from functools import partial
from pathlib import Path
import numpy as np
import psutil
import pytest
from reaver_nb.envs.base import Env, InProcessVectorEnv, Corridor
from reaver_nb.envs.gym import GymEnv
from reaver_nb.envs.shm import ShmVectorEnv, EnvWorkerError

SHM = Path('/dev/shm')


def shm_names(): return set(os.listdir(SHM)) if SHM.exists() else set()


def workers_of(pid=None):
    "Live env worker processes under `pid` (default: this process); zombies and vanished ones are skipped."
    out = []
    for p in psutil.Process(pid or os.getpid()).children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and 'reaver_nb.envs.shm_worker' in ' '.join(p.cmdline()): out.append(p)
        except psutil.Error: pass
    return out


@pytest.fixture(autouse=True)
def no_leaks():
    before = shm_names()
    yield
    deadline = time.time() + 10
    while time.time() < deadline and (workers_of() or shm_names() - before): time.sleep(0.1)
    assert not workers_of(), 'worker processes left behind'
    assert not (shm_names() - before), f'leaked shared memory: {shm_names() - before}'


def rollout(venv, steps, seed=0):
    rng = np.random.default_rng(seed)
    out = [venv.reset(seed=7)]
    for _ in range(steps):
        s = venv.step(venv.act_spec.sample(rng, (venv.n_envs,)))
        out.append((s.obs, s.reward, s.terminated, s.truncated, s.final_obs, s.episode_return, s.episode_length))
    return out


def assert_same(a, b):
    import jax
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)): np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize('env_id,kw,steps', [('CartPole-v1', dict(make_kwargs={'max_episode_steps': 25}), 300),
                                             ('ALE/Pong-v5', {}, 120)])
def test_same_trajectories_as_in_process(env_id, kw, steps):
    fns = [partial(GymEnv, env_id, **kw)] * 4
    ref = InProcessVectorEnv(fns)
    want = rollout(ref, steps); ref.close()
    with ShmVectorEnv(fns, n_workers=2) as venv:
        got = rollout(venv, steps)
    assert_same(want, got)
    if env_id == 'CartPole-v1':      # the time limit fired, so truncation and final observations were exercised
        assert any(x[3].any() for x in got[1:])


def test_kill_9_a_random_worker_20_times_training_goes_on():
    fns = [partial(GymEnv, 'CartPole-v1')] * 4
    rng, r = np.random.default_rng(0), random.Random(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        with ShmVectorEnv(fns, n_workers=2, max_restarts=20) as venv:
            venv.reset(seed=0)
            for k in range(20):
                for _ in range(r.randint(1, 5)): venv.step(venv.act_spec.sample(rng, (4,)))
                os.kill(r.choice(venv.pids), signal.SIGKILL)
                t = time.time()
                s = venv.step(venv.act_spec.sample(rng, (4,)))
                assert time.time() - t < 10
                assert s.crashed.sum() == 2 and s.truncated[s.crashed].all()
                assert not s.finished[s.crashed].any()
            assert venv.restarts == 20
            with pytest.raises(EnvWorkerError, match='max_restarts=20'):
                os.kill(venv.pids[0], signal.SIGKILL)
                venv.step(venv.act_spec.sample(rng, (4,)))


def test_training_survives_killed_workers(tmp_path):
    "kill -9 env workers 20 times during a real training run: it goes on; the run ends after the 20th kill."
    import reaver_nb
    stop, kills, t0 = threading.Event(), [], time.time()
    def killer():
        r = random.Random(1)
        while not stop.is_set() and len(kills) < 20:
            time.sleep(r.uniform(0.05, 0.2))
            ws = workers_of()
            if ws:
                try: ws[r.randrange(len(ws))].kill(); kills.append(1)
                except psutil.Error: pass
    def end_after_20_kills(row):
        if len(kills) >= 20 or time.time() - t0 > 300: raise KeyboardInterrupt   # stops train() with a checkpoint
    t = threading.Thread(target=killer, daemon=True); t.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            reaver_nb.train('CartPole-v1', 'ppo', n_envs=4, steps=10**7, run_id='k', results_dir=tmp_path,
                            verbose=False, callbacks=[end_after_20_kills],
                            gin_params=['PPO.minibatch_size = 32', 'RunSettings.max_restarts = 100',
                                        'RunSettings.log_every = 1'])
    except KeyboardInterrupt: pass
    finally:
        stop.set(); t.join()
    assert len(kills) == 20


def test_killed_workers_leave_no_fault_files_segments_or_fds(tmp_path, monkeypatch):
    "kill -9 workers, restart them, exceed max_restarts, close: no fault file, /dev/shm segment or fd outlives the env."
    import tempfile
    tmp = tmp_path / 'tmp'; tmp.mkdir()
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp))      # where a per-worker temp file would land
    me, fns, rng = psutil.Process(), [partial(GymEnv, 'CartPole-v1')] * 4, np.random.default_rng(0)
    before_shm, before_fds = shm_names(), me.num_fds()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        for closes_after in ('restarts', 'max_restarts'):
            venv = ShmVectorEnv(fns, n_workers=2, max_restarts=4)
            venv.reset(seed=0)
            assert len(shm_names() - before_shm) == 1
            for k in range(4):
                os.kill(venv.pids[k % 2], signal.SIGKILL)
                assert venv.step(venv.act_spec.sample(rng, (4,))).crashed.sum() == 2
                assert not list(tmp.iterdir())
            if closes_after == 'max_restarts':
                os.kill(venv.pids[0], signal.SIGKILL)
                with pytest.raises(EnvWorkerError, match='max_restarts=4'): venv.step(venv.act_spec.sample(rng, (4,)))
            venv.close()
            assert not list(tmp.iterdir()), 'fault files left behind'
            assert not (shm_names() - before_shm), 'shared memory left behind'
            assert not workers_of()
            assert me.num_fds() <= before_fds, f'{me.num_fds() - before_fds} file descriptors left open'


class Raises(Env):
    "Raises in step number `after`."
    def __init__(self, after=3):
        self.inner, self.after, self.t = Corridor(100, 1000), after, 0
        self.obs_spec, self.act_spec = self.inner.obs_spec, self.inner.act_spec
    def reset(self, seed=None): return self.inner.reset(seed)
    def step(self, a):
        self.t += 1
        if self.t >= self.after: raise_from_env()
        return self.inner.step(a)

def raise_from_env(): raise ValueError('the env broke on purpose')


def test_env_exception_stops_at_once_with_its_cause_and_traceback():
    "An exception a restart cannot cure (not `Env.retryable`) is not retried, whatever max_restarts allows."
    with ShmVectorEnv([partial(Raises, 3)] * 2, n_workers=2, max_restarts=10, name='Raises') as venv:
        venv.reset(seed=0)
        with pytest.raises(EnvWorkerError) as e:
            for _ in range(5): venv.step((np.ones(2, np.int32),))
        assert venv.restarts == 0
    msg = str(e.value)
    assert re.fullmatch(r'Env worker [01] of Raises \(envs [01]\.\.[01]\) failed: raised ValueError: the env broke on '
                        r'purpose', msg.splitlines()[0]), msg.splitlines()[0]
    assert 'raise_from_env' in msg and msg.splitlines()[-1].startswith('Not restarted: a restart would fail the same way')


class LosesConnection(Raises):
    def step(self, a):
        self.t += 1
        if self.t >= self.after: raise ConnectionResetError('the game closed its socket')
        return self.inner.step(a)


def test_lost_connection_is_retried_and_its_cause_shown():
    with ShmVectorEnv([partial(LosesConnection, 2)], n_workers=1, max_restarts=2, name='Flaky') as venv:
        venv.reset(seed=0)
        with pytest.warns(RuntimeWarning) as warned, pytest.raises(EnvWorkerError, match='max_restarts=2') as e:
            for _ in range(10): venv.step((np.ones(1, np.int32),))
    causes = [str(w.message).split(';')[0] for w in warned]
    assert causes == ['Env worker 0 of Flaky (envs 0..0) failed: raised ConnectionResetError: the game closed its socket'] * 2
    assert str(e.value).startswith(causes[0])


class Segfaults(Corridor):
    def step(self, a):
        import ctypes
        ctypes.string_at(0)


class Hangs(Corridor):
    def step(self, a): time.sleep(3600)


def test_segfault_and_hang_are_detected_not_waited_for():
    with ShmVectorEnv([Segfaults] * 2, n_workers=1, max_restarts=0) as venv:
        venv.reset()
        t = time.time()
        with pytest.raises(EnvWorkerError, match='SIGSEGV') as e:
            venv.step((np.ones(2, np.int32),))
        assert time.time() - t < 10 and 'test_shm.py", line' in str(e.value)   # faulthandler's Python traceback
    with ShmVectorEnv([Hangs] * 2, n_workers=2, max_restarts=0, step_timeout=2) as venv:
        venv.reset()
        with pytest.raises(EnvWorkerError, match='no answer within 2 s'):
            venv.step((np.ones(2, np.int32),))


def test_unpicklable_factory_is_a_clear_error():
    lock = threading.Lock()
    with pytest.raises(TypeError, match='cannot be pickled'):
        ShmVectorEnv([lambda: (lock, Corridor())[1]] * 2)


def test_exception_in_the_parent_cleans_up():
    with pytest.raises(ZeroDivisionError):
        with ShmVectorEnv([Corridor] * 2, n_workers=2) as venv:
            venv.reset(); 1 / 0
    venv = ShmVectorEnv([Corridor] * 2, n_workers=2)
    venv.reset(); del venv          # garbage collection closes it too


SCRIPT = '''
import sys, time, numpy as np
from functools import partial
from reaver_nb.envs.gym import GymEnv
from reaver_nb.envs.shm import ShmVectorEnv
# no `if __name__ == "__main__":` guard on purpose: workers never re-import the main module
venv = ShmVectorEnv([partial(GymEnv, 'CartPole-v1')] * 4, n_workers=2)
venv.reset(seed=0)
s = venv.step((np.ones(4, np.int32),))
print('pids', *venv.pids, 'shm', venv.shm_name, 'reward', s.reward.sum(), flush=True)
if len(sys.argv) > 1 and sys.argv[1] == 'loop':
    while True: venv.step((np.ones(4, np.int32),))
venv.close()
'''

def _start(args, **kw):
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True, **kw)

def test_works_from_a_script_and_from_python_m(tmp_path):
    (tmp_path / 'myscript.py').write_text(SCRIPT)
    for args in (['myscript.py'], ['-m', 'myscript']):
        r = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert 'reward 4.0' in r.stdout


@pytest.mark.parametrize('how', ['SIGKILL', 'SIGINT'])
def test_parent_killed_or_interrupted_leaves_nothing(tmp_path, how):
    (tmp_path / 'myscript.py').write_text(SCRIPT)
    tmp = tmp_path / 'tmp'; tmp.mkdir()
    p = _start(['myscript.py', 'loop'], cwd=tmp_path, env=dict(os.environ, TMPDIR=str(tmp)))
    words = p.stdout.readline().split()
    pids, name = [int(x) for x in words[1:words.index('shm')]], words[words.index('shm') + 1].lstrip('/')
    time.sleep(0.5)
    p.send_signal(getattr(signal, how))
    p.wait(timeout=30)
    deadline = time.time() + 15
    while time.time() < deadline and (any(psutil.pid_exists(x) and psutil.Process(x).status() != 'zombie'
                                          for x in pids) or (SHM / name).exists()):
        time.sleep(0.1)
    assert not any(psutil.pid_exists(x) and psutil.Process(x).status() != 'zombie' for x in pids)
    assert not (SHM / name).exists()
    assert not list(tmp.iterdir()), 'files left in the temp folder'
