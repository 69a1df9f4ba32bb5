"""The Colab tcmalloc segfault (exit code -11), its fix and its explanation, and `doctor`, against a stand-in game
binary (tests/fakes/fake_sc2.sh) in a fake $SC2PATH layout: no StarCraft II needed."""
import io, os, shutil, signal, subprocess, time
from pathlib import Path
import psutil, pytest

from reaver_nb.sc2 import launch
from reaver_nb.sc2.installer import MINI_GAMES
from reaver_nb.sc2.launch import (GameCrashed, TcmallocRemoved, doctor, explain_exit, game_environment,
                                  is_tcmalloc, launch_checked, prepare_game_environment, start_game, strip_tcmalloc)

FAKE = Path(__file__).parent / 'fakes' / 'fake_sc2.sh'
COLAB = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'   # only a string: nothing here loads it (the file is absent)
KEEP = '/opt/lib/libkeep.so'
FOLDER = '/opt/tcmalloc-tools/libfoo.so'               # 'tcmalloc' in a folder's name only: not a tcmalloc

def make_layout(root: Path, maps=MINI_GAMES) -> Path:
    "A fake $SC2PATH: Versions/Base75689/SC2_x64 (the stand-in) and Maps/mini_games/*.SC2Map; returns the binary."
    exe = root / 'Versions' / 'Base75689' / 'SC2_x64'
    exe.parent.mkdir(parents=True)
    shutil.copy(FAKE, exe); exe.chmod(0o755)
    (root / 'Maps' / 'mini_games').mkdir(parents=True)
    for m in maps: (root / 'Maps' / 'mini_games' / f'{m}.SC2Map').write_bytes(b'fake map')
    return exe

@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    "As in a fresh process: nothing said yet, prepare_game_environment() not called (the pysc2 hooks pass through)."
    monkeypatch.setitem(launch._state, 'announced', False)
    monkeypatch.setitem(launch._state, 'removed', [])
    monkeypatch.setitem(launch._state, 'armed', False)

@pytest.fixture
def game(tmp_path, monkeypatch):
    "The stand-in game as $SC2PATH; fails the test if a game process is left running."
    root = tmp_path / 'StarCraftII'
    exe = make_layout(root)
    monkeypatch.setenv('SC2PATH', str(root))
    yield exe
    pid_file = exe.parent / 'pid.txt'
    if pid_file.exists():
        pid = int(pid_file.read_text())
        alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        if alive: os.kill(pid, signal.SIGKILL)
        assert not alive, f"the game process {pid} was left running"

def child_env(exe: Path) -> dict:
    return dict(l.split('=', 1) for l in (exe.parent / 'env.txt').read_text().splitlines() if '=' in l)

@pytest.fixture
def pysc2():
    from reaver_nb.sc2.compat import import_pysc2
    import_pysc2()
    from pysc2 import run_configs
    from pysc2.lib.remote_controller import ConnectError
    return run_configs, ConnectError

# -- strip_tcmalloc ---------------------------------------------------------------------------------------------------
def test_strip_keeps_others_space_separated():
    env = {'LD_PRELOAD': f'/a/liba.so {COLAB}  /b/libb.so'}
    assert strip_tcmalloc(env) == [COLAB]
    assert env == {'LD_PRELOAD': '/a/liba.so /b/libb.so'}

def test_strip_keeps_others_colon_separated():
    env = {'LD_PRELOAD': f'{COLAB}:/a/liba.so'}
    assert strip_tcmalloc(env) == [COLAB]
    assert env['LD_PRELOAD'] == '/a/liba.so'
    env = {'LD_PRELOAD': f'/a/liba.so:{COLAB} /b/libb.so'}   # mixed: joined with spaces
    strip_tcmalloc(env)
    assert env['LD_PRELOAD'] == '/a/liba.so /b/libb.so'

def test_strip_removes_all_tcmalloc_variants_and_unsets_when_empty():
    variants = [COLAB, '/usr/lib/libtcmalloc_minimal.so.4', '/opt/gperftools/lib/libtcmalloc_and_profiler.so',
                'libTCMalloc.so']
    env = {'LD_PRELOAD': ':'.join(variants), 'HOME': '/root'}
    assert strip_tcmalloc(env) == variants
    assert env == {'HOME': '/root'}

def test_strip_leaves_other_environments_alone():
    for env in ({}, {'LD_PRELOAD': ''}, {'LD_PRELOAD': '/a/liba.so'}):
        before = dict(env)
        assert strip_tcmalloc(env) == [] and env == before

def test_tcmalloc_is_known_by_its_file_name():
    for lib in (COLAB, 'libtcmalloc.so', '/usr/lib/libtcmalloc_minimal.so.4', '/x/LIBTCMALLOC_debug.so.4.5.9',
                '/opt/gperftools/lib/libtcmalloc_and_profiler.so'):
        assert is_tcmalloc(lib), lib
    for lib in (FOLDER, '/usr/lib/tcmalloc.so', '/usr/lib/libtcmalloc.a', '/opt/libtcmalloc/libjemalloc.so.2', KEEP):
        assert not is_tcmalloc(lib), lib
    env = {'LD_PRELOAD': f'{FOLDER}:{COLAB}'}
    assert strip_tcmalloc(env) == [COLAB] and env == {'LD_PRELOAD': FOLDER}

def test_strip_needs_a_mapping_and_game_environment_copies(monkeypatch):
    "Nothing here edits os.environ: strip_tcmalloc takes the mapping to edit, game_environment() returns a copy."
    monkeypatch.setenv('LD_PRELOAD', f'{COLAB}:{KEEP}')
    with pytest.raises(TypeError): strip_tcmalloc()
    env = game_environment()
    assert env['LD_PRELOAD'] == KEEP and env['PATH'] == os.environ['PATH']
    assert os.environ['LD_PRELOAD'] == f'{COLAB}:{KEEP}'
    assert game_environment({'LD_PRELOAD': COLAB, 'A': 'b'}) == {'A': 'b'}

def test_prepare_says_it_once_and_leaves_os_environ_alone(monkeypatch, recwarn):
    monkeypatch.setenv('LD_PRELOAD', f'{COLAB} {KEEP}')
    assert prepare_game_environment() == [COLAB]
    assert os.environ['LD_PRELOAD'] == f'{COLAB} {KEEP}' and launch._state['armed']
    assert prepare_game_environment() == [COLAB]          # found again, but not said again
    mine = {'LD_PRELOAD': COLAB}
    assert prepare_game_environment(mine) == [COLAB] and mine == {}     # a mapping of your own: edited
    monkeypatch.setenv('LD_PRELOAD', FOLDER)
    assert prepare_game_environment() == []
    said = [w for w in recwarn if issubclass(w.category, TcmallocRemoved)]
    assert len(said) == 1
    assert COLAB in str(said[0].message) and 'LD_PRELOAD' in str(said[0].message)
    assert 'os.environ' in str(said[0].message) and 'keeps it' in str(said[0].message)

# -- explain_exit -----------------------------------------------------------------------------------------------------
def test_explain_exit():
    msg = explain_exit(-11, {'LD_PRELOAD': f'{COLAB} {KEEP}'})
    for part in ('signal 11', 'segfault', f"LD_PRELOAD='{COLAB} {KEEP}'", 'contains tcmalloc',
                 'reaver_nb.sc2.prepare_game_environment()', 'unset LD_PRELOAD'):
        assert part in msg, part
    assert 'not the Colab tcmalloc crash' in explain_exit(-11, {})
    assert 'SIGKILL' in explain_exit(-9, {}) and 'out-of-memory' in explain_exit(-9, {})
    assert 'code 1' in explain_exit(1, {})
    assert explain_exit(None, {}) is None and explain_exit(0, {}) is None

# -- the stand-in game ------------------------------------------------------------------------------------------------
def test_raw_launch_with_colab_preload_segfaults(game):
    "(a) Started the way Colab starts every process, the game dies with signal 11."
    r = subprocess.run([str(game), '-listen', '127.0.0.1', '-port', '1'], capture_output=True, timeout=10,
                       env={**os.environ, 'LD_PRELOAD': f'{COLAB} {KEEP}'})
    assert r.returncode == -11
    assert not (game.parent / 'argv.txt').exists()

def test_pysc2_launch_after_prepare_runs(game, monkeypatch, pysc2):
    "(b) prepare_game_environment(), then pysc2's own launch path: the game runs, without tcmalloc, keeping KEEP."
    run_configs, ConnectError = pysc2
    monkeypatch.setenv('LD_PRELOAD', f'{COLAB} {KEEP}')
    with pytest.warns(TcmallocRemoved):
        assert prepare_game_environment() == [COLAB]
    assert os.environ['LD_PRELOAD'] == f'{COLAB} {KEEP}'       # this process keeps it: only the game goes without
    run_config = run_configs.get()
    t = time.monotonic()
    with pytest.raises(ConnectError):     # the stand-in opens no websocket
        run_config.start(want_rgb=False, timeout_seconds=1)
    assert time.monotonic() - t < 10
    env = child_env(game)
    assert env['LD_PRELOAD'] == KEEP
    assert env['LD_LIBRARY_PATH'].endswith('/Libs/')
    assert os.environ['LD_PRELOAD'] == f'{COLAB} {KEEP}' and run_config.env['LD_PRELOAD'] == f'{COLAB} {KEEP}'
    argv = (game.parent / 'argv.txt').read_text().split()
    assert argv[:2] == ['-listen', '127.0.0.1'] and '-port' in argv and '-dataDir' in argv

def test_launch_checked_fixes_a_run_config_built_earlier(game, monkeypatch, pysc2):
    "pysc2 copied os.environ (with tcmalloc) into the run config before the fix: launch_checked fixes the copy too."
    run_configs, ConnectError = pysc2
    monkeypatch.setenv('LD_PRELOAD', f'{COLAB}:{KEEP}')
    run_config = run_configs.get()
    with pytest.warns(TcmallocRemoved), pytest.raises(ConnectError):   # not GameCrashed: the game was running
        launch_checked(lambda: run_config.start(want_rgb=False, timeout_seconds=1))
    assert child_env(game)['LD_PRELOAD'] == KEEP
    assert os.environ['LD_PRELOAD'] == f'{COLAB}:{KEEP}'                 # neither this process's environment
    assert run_config.env['LD_PRELOAD'] == f'{COLAB}:{KEEP}'             # nor the run config's was changed

def test_a_folder_named_tcmalloc_is_kept(game, monkeypatch, pysc2, recwarn):
    "A preload in a folder called tcmalloc-something is not tcmalloc: kept for the game, which runs, and no warning."
    run_configs, ConnectError = pysc2
    monkeypatch.setenv('LD_PRELOAD', f'{FOLDER}:{KEEP}')
    with pytest.raises(ConnectError):
        launch_checked(lambda: run_configs.get().start(want_rgb=False, timeout_seconds=1))
    assert child_env(game)['LD_PRELOAD'] == f'{FOLDER}:{KEEP}'
    assert not [w for w in recwarn if issubclass(w.category, TcmallocRemoved)]

@pytest.mark.parametrize('prepared_before', [False, True])
def test_bypassed_fix_raises_game_crashed(game, monkeypatch, pysc2, prepared_before):
    "(c) Without the fix the game segfaults, and the wrapper says why and what to do (prepare=False wins inside)."
    run_configs, ConnectError = pysc2
    monkeypatch.setenv('LD_PRELOAD', f'{COLAB} {KEEP}')
    monkeypatch.setitem(launch._state, 'armed', prepared_before)
    t = time.monotonic()
    with pytest.raises(GameCrashed) as info:
        launch_checked(lambda: run_configs.get().start(want_rgb=False, timeout_seconds=5), prepare=False)
    assert time.monotonic() - t < 5      # pysc2 gives up once it sees the game gone, not after the timeout
    e = info.value
    msg = str(e)
    for part in ('signal 11', 'segfault', 'LD_PRELOAD', 'tcmalloc', COLAB,
                 'reaver_nb.sc2.prepare_game_environment()', 'unset LD_PRELOAD', str(game)):
        assert part in msg, part
    assert e.returncode == -11 and e.binary == str(game) and e.preload == f'{COLAB} {KEEP}'
    assert isinstance(e.__cause__, ConnectError)
    assert os.environ['LD_PRELOAD'] == f'{COLAB} {KEEP}'          # bypassed: nothing was changed
    assert not (game.parent / 'argv.txt').exists()

def test_sc2env_creation_raises_game_crashed(game, monkeypatch, pysc2):
    "The adapter's call: start_game(lambda: SC2Env(...)) — the crash surfaces as GameCrashed from SC2Env's launch."
    from absl.testing import flagsaver   # not monkeypatch.setattr: pytest 9 undoes it on a FlagValues by deleting the flag
    from pysc2.env import sc2_env
    monkeypatch.setenv('LD_PRELOAD', COLAB)
    aif = sc2_env.AgentInterfaceFormat(feature_dimensions=sc2_env.Dimensions(screen=16, minimap=16))
    make = lambda: sc2_env.SC2Env(map_name='MoveToBeacon', players=[sc2_env.Agent(sc2_env.Race.terran)],
                                  agent_interface_format=aif)
    with flagsaver.flagsaver(sc2_timeout=5), pytest.raises(GameCrashed, match='tcmalloc'):
        start_game(make, prepare=False)

def test_other_errors_pass_through(game):
    def boom(): raise ValueError('Map Nope not found')
    with pytest.raises(ValueError, match='Nope'):
        launch_checked(boom)
    assert launch_checked(lambda: 42) == 42

# -- doctor -----------------------------------------------------------------------------------------------------------
CHECKS = ['python', 'jax', 'pysc2', 'absl_flags', 'sc2path', 'binary', 'maps', 'ld_preload', 'launch']

def run_doctor(*args, **kw):
    buf = io.StringIO()
    return doctor(*args, file=buf, **kw), buf.getvalue()

def test_doctor_on_a_fake_install(tmp_path, monkeypatch):
    monkeypatch.delenv('LD_PRELOAD', raising=False)
    make_layout(tmp_path / 'sc2')
    report, out = run_doctor(tmp_path / 'sc2', launch=False)   # this fake never answers: the launch, in test_sc2_standin
    assert list(report) == CHECKS[:-1]
    assert all(ok for ok, _ in report.values()), out
    assert 'build 75689, game 4.10.0' in report['binary'][1]
    assert '✓ binary' in out and '✓ maps' in out and 'fix:' not in out and 'ready' in out

def test_doctor_on_an_empty_dir(tmp_path, monkeypatch):
    monkeypatch.setenv('LD_PRELOAD', COLAB)
    report, out = run_doctor(tmp_path)
    assert report['sc2path'][0] and not report['binary'][0] and not report['maps'][0] and report['ld_preload'][0]
    assert '✗ binary' in out and '✗ maps' in out and '✓ ld_preload' in out and '✗ launch' in out
    assert out.count('    fix: ') == 2 and 'not tried: no game binary' in report['launch'][1]
    assert 'prepare_game_environment()' in out and 'install(accept_eula=True)' in out
    assert 'BuildMarines' in report['maps'][1]
    report, out = run_doctor(tmp_path / 'nowhere')
    assert not report['sc2path'][0] and 'does not exist' in report['sc2path'][1]

def test_doctor_ld_preload_after_prepare(tmp_path, monkeypatch):
    "tcmalloc in this process's LD_PRELOAD (Colab's): a pass, since reaver_nb's games run without it; own code is told."
    monkeypatch.setenv('LD_PRELOAD', f'{COLAB} {KEEP}')
    ok, detail = run_doctor(tmp_path)[0]['ld_preload']
    assert ok and 'the games reaver_nb starts run without it' in detail
    assert 'in your own pysc2 code call reaver_nb.sc2.prepare_game_environment() first' in detail
    with pytest.warns(TcmallocRemoved): prepare_game_environment()
    ok, detail = run_doctor(tmp_path)[0]['ld_preload']
    assert ok and 'prepare_game_environment() was called' in detail
    monkeypatch.setenv('LD_PRELOAD', FOLDER)
    assert run_doctor(tmp_path)[0]['ld_preload'] == (True, f"{FOLDER!r}, no tcmalloc")

def test_doctor_uses_sc2path_and_default(tmp_path, monkeypatch):
    make_layout(tmp_path / 'sc2')
    monkeypatch.setenv('SC2PATH', str(tmp_path / 'sc2'))
    report, _ = run_doctor()
    assert report['binary'][0] and 'from $SC2PATH' in report['sc2path'][1]
    monkeypatch.delenv('SC2PATH'); monkeypatch.setenv('HOME', str(tmp_path))
    report, _ = run_doctor()
    assert report['sc2path'][1].startswith(str(tmp_path / 'StarCraftII'))

def test_doctor_reports_broken_machines_and_never_raises(tmp_path, monkeypatch):
    from reaver_nb.sc2 import compat
    exe = make_layout(tmp_path / 'sc2', maps=MINI_GAMES[:5])
    (tmp_path / 'sc2' / 'Maps' / 'mini_games' / 'MoveToBeacon.SC2Map').write_bytes(b'')
    exe.chmod(0o644)
    def missing(): raise compat.PySC2Missing('pysc2 is not installed')
    monkeypatch.setattr(compat, 'pysc2_status', missing)
    report, out = run_doctor(tmp_path / 'sc2')
    from reaver_nb.extras import install_command
    assert not report['pysc2'][0] and f"reaver_nb's [sc2] extra: {install_command('sc2')}" in out
    assert not report['binary'][0] and f'chmod +x {exe}' in out
    assert not report['maps'][0]
    assert 'CollectMineralsAndGas, BuildMarines' in report['maps'][1] and 'MoveToBeacon' in report['maps'][1]
    def broken(): raise RuntimeError('protobuf exploded')
    monkeypatch.setattr(compat, 'pysc2_status', broken)
    monkeypatch.setattr(launch, 'find_binaries', lambda p: 1 / 0)
    report, out = run_doctor(tmp_path / 'sc2')
    assert 'protobuf exploded' in report['pysc2'][1]
    assert not report['binary'][0] and 'ZeroDivisionError' in report['binary'][1]
    (tmp_path / 'file').write_text('not a dir')
    report, _ = run_doctor(tmp_path / 'file')
    assert not report['sc2path'][0] and 'not a directory' in report['sc2path'][1]

    class Closed(io.StringIO):
        def write(self, s): raise ValueError('I/O operation on closed file')
    assert list(doctor(tmp_path, file=Closed())) == CHECKS
