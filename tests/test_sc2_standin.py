"""The real StarCraft II path, end to end, without the game: pysc2 launches `tools/sc2_standin` — a stand-in for the
game binary that speaks the game's own protocol (s2clientprotocol over pysc2's websocket) from the JAX mini-games —
exactly as it launches `SC2_x64`. Nothing of pysc2 is mocked: its `SC2Env` constructor, run config, process launch,
remote controller, protocol checks and feature decoding all run; so do our env adapter, the shared-memory workers,
the restarts, training, `reaver test`, the doctor and pysc2's own agents."""
import json, os, signal, subprocess, sys, time
from pathlib import Path
import numpy as np
import psutil
import pytest

pytest.importorskip('pysc2')
from conftest import ROOT, reaver
sys.path.insert(0, str(ROOT / 'tools'))
import sc2_standin
from reaver_nb.sc2.compat import import_pysc2
import_pysc2()
from pysc2.env import sc2_env
from pysc2.lib import actions
from reaver_nb.envs import pysc2_env

SHM = Path('/dev/shm')


@pytest.fixture(scope='module')
def install(tmp_path_factory):
    "A stand-in install, shared by this module's tests (its JAX cache too: each map compiles once)."
    return sc2_standin.lay_out(tmp_path_factory.mktemp('game') / 'StarCraftII')


@pytest.fixture
def game(install, monkeypatch):
    "SC2PATH at the stand-in install; no preload; afterwards, no stand-in process may be left running."
    monkeypatch.setenv('SC2PATH', str(install))
    monkeypatch.delenv('LD_PRELOAD', raising=False)
    before = set(_standins())
    yield install
    deadline = time.time() + 20
    while set(_standins()) - before and time.time() < deadline: time.sleep(0.5)
    assert not set(_standins()) - before, 'stand-in games left running'


def _standins():
    out = []
    for p in psutil.process_iter(['pid', 'cmdline']):
        try:
            if any(str(sc2_standin.GAME) == a for a in p.info['cmdline'] or ()): out.append(p.info['pid'])
        except psutil.Error: pass
    return out


def _segments(): return set(SHM.glob('psm_*')) if SHM.is_dir() else set()


def _aif(): return sc2_env.AgentInterfaceFormat(feature_dimensions=sc2_env.Dimensions(screen=16, minimap=16))


def random_call(rng, obs, spec):
    "A random player: an offered function, arguments drawn within the action spec's sizes."
    fid = int(rng.choice(obs['available_actions']))
    return actions.FunctionCall(fid, [[int(rng.integers(0, s)) for s in arg.sizes] for arg in spec.functions[fid].args])


def assert_same(real, sim, t, seen):
    """pysc2's decoding of the stand-in's messages equals the simulation's own pysc2 observation, key by key; `seen`
    collects the keys that held something other than zeros (so that the comparison is known not to be vacuous)."""
    assert (real.step_type, real.reward, real.discount) == (sim.step_type, sim.reward, sim.discount), t
    ro, so = real.observation, sim.observation
    for key, value in so.items():
        if isinstance(value, pysc2_env.NotSimulated): continue
        if key == 'map_name': assert ro[key] == value; continue
        a, b = np.asarray(ro[key]), np.asarray(value)
        if key == 'available_actions': a, b = np.sort(a), np.sort(b)   # pysc2 lists a set
        assert a.shape == b.shape and (a == b).all(), (t, key, a, b)
        if a.any(): seen.add(key)
    if real.reward: seen.add('reward')


@pytest.mark.parametrize('map_name, steps', [('MoveToBeacon', 300), ('DefeatRoaches', 300)])
def test_pysc2_on_the_standin_decodes_what_the_simulation_gives(game, map_name, steps):
    """pysc2's own SC2Env against the stand-in and the drop-in with the same seed and the same random calls: every
    observation (every layer, player, selection panels, control groups, score, available actions, last actions),
    reward, step type and discount agree, through an episode's end and pysc2's restart of the next one."""
    kw = dict(map_name=map_name, players=[sc2_env.Agent(sc2_env.Race.terran)], agent_interface_format=_aif(),
              random_seed=7)
    real, sim = sc2_env.SC2Env(**kw), pysc2_env.SC2Env(**kw)
    try:
        rng, spec, ends, seen = np.random.default_rng(0), real.action_spec()[0], 0, set()
        r, s = real.reset()[0], sim.reset()[0]
        for t in range(steps):
            assert_same(r, s, t, seen)
            ends += r.last()
            call = random_call(rng, s.observation, spec)
            r, s = real.step([call])[0], sim.step([call])[0]
        assert ends >= 1   # an episode ended and the next was started by pysc2's restart request
        assert {'feature_screen', 'feature_minimap', 'player', 'available_actions', 'last_actions', 'game_loop',
                'single_select' if map_name == 'MoveToBeacon' else 'multi_select'} <= seen, seen
    finally:
        real.close(); sim.close()


def test_the_adapter_plays_the_standin(game):
    "Our SC2Env (pysc2 underneath) on the stand-in: observations in its Specs, an episode of 240 steps, then closed."
    from reaver_nb.envs.sc2 import SC2Env
    env = SC2Env('MoveToBeacon')
    try:
        obs, rng = env.reset(seed=3), np.random.default_rng(0)
        for s, x in zip(env.obs_spec, obs): assert s.contains(x) and x.dtype == s.dtype, s.name
        mask = env.obs_spec.names.index('available_actions')
        for t in range(1, 300):
            a = list(env.act_spec.sample(rng))
            a[0] = rng.choice(np.flatnonzero(obs[mask]))
            obs, reward, term, trunc = env.step(tuple(a))
            if term: break
        assert (t, trunc, env.restarts) == (240, False, 0)   # 120 game seconds = 240 steps of 8 game loops
    finally: env.close()


def test_doctor_passes_on_the_standin(game):
    r = reaver('doctor', timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [l for l in r.stdout.splitlines() if l[:1] in '✓✗']
    assert len(lines) == 9 and all(l.startswith('✓') for l in lines), r.stdout
    assert 'launch' in lines[-1] and 'game 4.10.0' in lines[-1] and 'ready to run StarCraft II' in r.stdout


def test_train_then_test_on_the_real_path(game, tmp_path):
    """`reaver train --env MoveToBeacon` with the default shared-memory workers (one game each), then `reaver test`:
    both finish, the log has rows, and no shared memory or game process is left."""
    segments = _segments()
    r = reaver('train', '--env', 'MoveToBeacon', '--n-envs', 2, '--steps', 1024, '--run-id', 'mtb', '--results-dir',
               tmp_path, '--gin-param', 'A2C.traj_len = 16', '--gin-param', 'RunSettings.log_every = 8', timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [json.loads(l) for l in (tmp_path / 'mtb' / 'metrics.jsonl').read_text().splitlines()]
    assert rows[-1]['frames'] == 1024 and 'restarting' not in r.stderr
    r = reaver('test', 'mtb', '--results-dir', tmp_path, '--episodes', 2, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    ev = json.loads((tmp_path / 'mtb' / 'evaluation.json').read_text())
    assert ev['episodes'] == 2 and ev['env'] == 'MoveToBeacon'
    assert _segments() <= segments


def test_a_game_that_crashes_mid_run_is_restarted_and_training_goes_on(game, tmp_path, monkeypatch):
    "One stand-in dies by SIGSEGV at its 40th step: the adapter restarts its game, the run finishes, nothing leaks."
    monkeypatch.setenv('SC2_STANDIN_CRASH_AFTER', '40')
    monkeypatch.setenv('SC2_STANDIN_CRASH_TOKEN', str(tmp_path / 'crashed'))
    segments = _segments()
    r = reaver('train', '--env', 'MoveToBeacon', '--n-envs', 2, '--steps', 1024, '--run-id', 'crash', '--results-dir',
               tmp_path, '--gin-param', 'A2C.traj_len = 16', timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / 'crashed').exists()
    assert 'StarCraft II connection failed' in r.stderr and 'restarting the game (1/10)' in r.stderr, r.stderr[-3000:]
    rows = [json.loads(l) for l in (tmp_path / 'crash' / 'metrics.jsonl').read_text().splitlines()]
    assert rows[-1]['frames'] == 1024
    assert _segments() <= segments


def test_missing_game_is_one_line_at_once(tmp_path, monkeypatch):
    monkeypatch.setenv('SC2PATH', str(tmp_path / 'StarCraftII'))
    t0 = time.time()
    r = reaver('train', '--env', 'MoveToBeacon', '--results-dir', tmp_path, timeout=300)
    assert r.returncode == 2 and time.time() - t0 < 60
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(err) == 1 and 'Env worker' not in r.stderr, r.stderr
    assert err[0].startswith('reaver train: error: StarCraft II is not installed where pysc2 looks: ')
    assert 'reaver sc2 install --accept-eula' in err[0] and 'reaver doctor' in err[0]


def test_missing_map_is_one_line(install, tmp_path, monkeypatch):
    partial = sc2_standin.lay_out(tmp_path / 'StarCraftII')
    (partial / 'Maps' / 'mini_games' / 'DefeatRoaches.SC2Map').unlink()
    monkeypatch.setenv('SC2PATH', str(partial))
    r = reaver('train', '--env', 'DefeatRoaches', '--results-dir', tmp_path, timeout=300)
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(err) == 1 and 'The map DefeatRoaches is not installed' in err[0], r.stderr


def test_a_map_the_game_refuses_stops_at_once_in_one_line(install, tmp_path, monkeypatch):
    """A damaged map file (here: not an SC2Map at all) is refused by the game in the env worker: pysc2's RequestError
    with the game's reason, not retried, one line."""
    game = sc2_standin.lay_out(tmp_path / 'StarCraftII')
    (game / 'Maps' / 'mini_games' / 'MoveToBeacon.SC2Map').write_bytes(b'<html>a download that went wrong</html>')
    monkeypatch.setenv('SC2PATH', str(game))
    r = reaver('train', '--env', 'MoveToBeacon', '--n-envs', 2, '--steps', 1024, '--results-dir', tmp_path, timeout=300)
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(err) == 1, r.stderr
    assert ('RequestError: SC2APIProtocol.ResponseCreateGame.Error.InvalidMapData: '
            "'mini_games/MoveToBeacon.SC2Map is not a map: the file is damaged'") in err[0], err[0]
    assert 'Not restarted' in err[0] and 'restarting it' not in r.stderr


def test_a_multiplayer_map_is_one_line_in_the_learner(game, tmp_path):
    "pysc2 refuses one agent on a two-player map (its constructor, in a worker); the learner says so first."
    r = reaver('train', '--env', 'sc2:Simple64', '--results-dir', tmp_path, timeout=300)
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(err) == 1 and 'sc2:Simple64 is a map for 2 players' in err[0], r.stderr


def test_a_setting_pysc2_would_refuse_is_one_line_in_the_learner(tmp_path):
    r = reaver('train', '--env', 'MoveToBeacon', '--results-dir', tmp_path, '--gin-param',
               'SC2Settings.save_replay_episodes = 1', timeout=300)
    err = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(err) == 1 and 'bind SC2Settings.replay_dir too' in err[0], r.stderr


def test_pysc2_agents_play_the_real_path(game):
    "pysc2's scripted agent through pysc2's own runner, on the game (`--nosim`), as `python -m pysc2.bin.agent` would."
    r = subprocess.run([sys.executable, '-m', 'reaver_nb.envs.pysc2_env', '--nosim', '--map', 'MoveToBeacon',
                        '--agent', 'pysc2.agents.scripted_agent.MoveToBeacon', '--max_episodes', '1',
                        '--feature_screen_size', '16', '--feature_minimap_size', '16', '--norender', '--parallel', '1'],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert 'Game has started.' in r.stdout and 'Took' in r.stdout + r.stderr


def test_a_jax_run_plays_the_real_path(game, tmp_path):
    "A run trained on jax:MoveToBeacon, tested on the real MoveToBeacon (`reaver test RUN --env MoveToBeacon`)."
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--agent', 'ppo', '--n-envs', 4, '--steps', 256, '--run-id', 'jx',
               '--results-dir', tmp_path, '--gin-param', 'PPO.traj_len = 16', '--gin-param', 'PPO.minibatch_size = 32',
               '--quiet', timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    r = reaver('test', 'jx', '--env', 'MoveToBeacon', '--episodes', 2, '--n-envs', 2, '--results-dir', tmp_path,
               timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert 'MoveToBeacon' in r.stdout
    # the same run as a pysc2 agent, through pysc2's own runner on the game
    r = subprocess.run([sys.executable, '-m', 'reaver_nb.envs.pysc2_env', '--nosim', '--map', 'MoveToBeacon',
                        '--agent', 'reaver_nb.pysc2_agent.Pysc2Agent', '--max_episodes', '1', '--feature_screen_size',
                        '16', '--feature_minimap_size', '16', '--norender', '--parallel', '1'],
                       capture_output=True, text=True, timeout=600, env={**os.environ, 'REAVER_RUN': str(tmp_path / 'jx')})
    assert r.returncode == 0, r.stderr[-3000:]


def test_ray_actors_play_the_real_path(game, tmp_path):
    pytest.importorskip('ray')
    r = reaver('train', '--env', 'MoveToBeacon', '--backend', 'ray', '--actors', 2, '--envs-per-actor', 1, '--steps',
               512, '--run-id', 'ray', '--results-dir', tmp_path, '--gin-param', 'IMPALA.traj_len = 16', timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [json.loads(l) for l in (tmp_path / 'ray' / 'metrics.jsonl').read_text().splitlines()]
    assert rows[-1]['frames'] >= 512


def test_tcmalloc_preloaded_as_on_colab(game, tmp_path, monkeypatch):
    """With Colab's tcmalloc in LD_PRELOAD the stand-in, like the game, dies with signal 11 when started by hand; the
    doctor and a run start it without tcmalloc."""
    colab = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'
    exe = game / 'Versions' / f'Base{sc2_standin.BUILD}' / 'SC2_x64'
    r = subprocess.run([str(exe), '-port', '1'], env={**os.environ, 'LD_PRELOAD': colab}, capture_output=True)
    assert r.returncode == -signal.SIGSEGV
    monkeypatch.setenv('LD_PRELOAD', colab)
    r = reaver('doctor', timeout=300)
    assert r.returncode == 0 and '✓ launch' in r.stdout and 'as Colab does' in r.stdout, r.stdout + r.stderr
