"""Property-based fuzz of `reaver train` flags and gin values (hypothesis, seeded): whatever a user types, the CLI
answers with exit status 0 (a `--dry-run` whose settings all check out) or 2 and one error line, never a traceback,
and writes nothing."""
import contextlib, io, os, string
from pathlib import Path
import pytest
from hypothesis import HealthCheck, event, given, seed, settings, strategies as st
from reaver_nb.cli import main

# every field a user can bind, by configurable (the CLI flags bind RunSettings')
FIELDS = {
    'RunSettings': ['env', 'agent', 'n_envs', 'total_steps', 'seed', 'vector_env', 'n_workers', 'max_restarts',
                    'log_every', 'log_seconds', 'checkpoint_every', 'checkpoint_minutes', 'keep_checkpoints', 'n_seeds',
                    'fused'],
    'HeadRestart': ['heads', 'at', 'min_return', 'every', 'agents'],
    'A2C': ['learning_rate', 'lr_schedule', 'adam_eps', 'traj_len', 'discount', 'gae_lambda', 'value_coef',
            'entropy_coef', 'head_entropy', 'entropy_decay_frames', 'entropy_final_frac', 'max_grad_norm',
            'clip_rewards', 'normalize_advantages', 'normalize_returns', 'n_epochs', 'minibatch_size'],
    'PPO': ['learning_rate', 'n_epochs', 'minibatch_size', 'clip_ratio', 'clip_value', 'traj_len'],
    'SC2Settings': ['screen_size', 'minimap_size', 'step_mul', 'screen_features', 'functions'],
    'MiniGameSettings': ['functions', 'order_queue', 'move_follows', 'click_to_centre'],
    'make_model': ['spatial_init', 'value_through_trunk'],
    'GymSettings': ['atari_frame_stack', 'make_kwargs'],
}
NAMES = string.ascii_letters + string.digits + '_-./\\:~ $\x00é'

numbers = st.one_of(st.integers(-2 ** 80, 2 ** 80), st.integers(-3, 70000),
                    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, 1, -1, 2 ** 31, 2 ** 63, 10 ** 30]))
literals = st.recursive(st.one_of(numbers, st.booleans(), st.none(), st.text(NAMES, max_size=12),
                                  st.sampled_from(['queued', 'a2c', 'ppo', 'shm', 'core', 'linear', 'player_relative'])),
                        lambda inner: st.one_of(st.tuples(inner, inner), st.lists(inner, max_size=3),
                                                st.dictionaries(st.sampled_from(['a2c', 'ppo', 'x']), inner, max_size=2)),
                        max_leaves=6)

def _value_text(v) -> str:
    text = repr(v)
    return {'nan': "float('nan')", 'inf': '1e999', '-inf': '-1e999'}.get(text, text)

typed = st.builds(lambda c, i, v: f"{c}.{FIELDS[c][i % len(FIELDS[c])]} = {_value_text(v)}",
                  st.sampled_from(sorted(FIELDS)), st.integers(0, 30), literals)
bindings = st.one_of(typed, typed, typed, st.text(string.printable, max_size=40))   # mostly well-formed, some anything
sane = st.integers(1, 4096).map(str)
int_flag = st.one_of(sane, sane, sane, numbers.map(str), st.text(NAMES, max_size=6))

@st.composite
def argvs(draw):
    argv = []
    for flag in ('--n-envs', '--steps', '--seed', '--seeds'):
        if draw(st.integers(0, 3)) == 0: argv += [flag, draw(int_flag)]
    if draw(st.booleans()):
        argv += ['--env', draw(st.sampled_from(['jax:MoveToBeacon', 'jax:CollectMineralShards', 'jax:DefeatRoaches',
                                                 'CartPole-v1', 'MoveToBeacon', 'Pendulum-v1', 'bogus', '']))]
    if draw(st.booleans()): argv += ['--agent', draw(st.sampled_from(['a2c', 'ppo', 'dqn']))]
    if draw(st.booleans()):
        argv += ['--run-id', draw(st.one_of(st.text(NAMES, max_size=10),
                                            st.sampled_from(['../x', '/abs', 'a/b', '..', '.', 'ok-run_1.0'])))]
    for b in draw(st.lists(bindings, max_size=3)): argv += [f'--gin-param={b}']   # (a value may start with '-')
    return argv


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try: code = main(argv)
        except SystemExit as e: code = e.code
    return code, out.getvalue(), err.getvalue()


def files_under(root: Path) -> set:
    return {p for p in root.rglob('*')}


@pytest.fixture(scope='module')
def sandbox(tmp_path_factory):
    root = tmp_path_factory.mktemp('fuzz')
    (root / 'a_file').write_text('')
    return root


@seed(20261203)
@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(argv=argvs(), results_kind=st.sampled_from(['new', 'file', 'under_file']))
def test_train_flags_and_gin_values_never_trace_back(sandbox, argv, results_kind):
    results = {'new': sandbox / 'results', 'file': sandbox / 'a_file', 'under_file': sandbox / 'a_file' / 'r'}[results_kind]
    before = files_under(sandbox)
    cwd = os.getcwd()
    os.chdir(sandbox)                      # a run id that escaped would land here, and be seen
    try: code, out, err = run_cli(['train', '--dry-run', '--results-dir', str(results), *argv])
    finally: os.chdir(cwd)
    assert 'Traceback' not in err and 'Traceback' not in out, (argv, err)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and 'error' in err, (argv, err)
    else:
        assert 'dry run: nothing written' in out, (argv, out)
    assert files_under(sandbox) == before, (argv, files_under(sandbox) - before)


@seed(20261203)
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(run_id=st.text(NAMES, max_size=12), episodes=int_flag)
def test_test_and_import_flags_never_trace_back(sandbox, run_id, episodes):
    for argv in (['test', '--run-id', run_id, '--episodes', episodes, '--results-dir', str(sandbox / 'results')],
                 ['import', str(sandbox / 'missing.reaver.tar.gz'), '--run-id', run_id, '--results-dir',
                  str(sandbox / 'results')]):
        before = files_under(sandbox)
        code, out, err = run_cli(argv)
        assert 'Traceback' not in err and code == 2 and len(err.strip().splitlines()) == 1, (argv, err)
        assert files_under(sandbox) == before


# Prepared run folders, imported data files and paths (issue 49): whatever a run folder, an archive or a path holds,
# the commands that read them answer with status 0 or one error line, never follow a link out, never wait on a FIFO,
# never write outside the results folder and the --out asked for, and leave nothing in the temp folder.
import gzip, hashlib, json as _json, shutil, signal, stat as _stat, tarfile, tempfile
import io as _io

CKPT = b'\x81\xa6frames\x05'
CONFIGS = [b"RunSettings.env = 'CartPole-v1'\nRunSettings.agent = 'ppo'\nRunSettings.vector_env = 'inprocess'\n",
           b"RunSettings.env = @RunSettings()\n", b"import os\n", b"RunSettings.seed = %S\n", b"\xff\xfe",
           b"make_model.activation = 'gelu'\n", b"RunSettings.env = 'jax:MoveToBeacon'\n", b"include '/etc/passwd'\n",
           b"GymSettings.make_kwargs = {'x': 1}\nRunSettings.env = 'CartPole-v1'\n"]
json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(),
                                     st.text(max_size=20)),
                           lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(
                               st.sampled_from(['env', 'agent', 'returns', 'frames', 'time', 'ep_return_mean',
                                                'train_seeds', 'episodes', 'x']), inner, max_size=5)), max_leaves=12)
VALID_EVALUATION = b'{"env": "CartPole-v1", "agent": "ppo", "returns": [10.0, 12.0], "train_seeds": [0]}'
VALID_METRICS = b'{"frames": 64, "time": 1.0, "ep_return_mean": 9.5}\n{"frames": 128, "time": 2.0, "ep_return_mean": 11.0}\n'
SPECIALS = ['fifo', 'link_file', 'link_dir', 'link_dev_zero', 'folder']
ENTRIES = ['config.gin', 'metrics.jsonl', 'evaluation.json', 'checkpoints', 'tb', 'train.log',
           'checkpoints/ckpt_0000000005.msgpack']


def _json_bytes(v) -> bytes:
    try: return _json.dumps(v).encode()
    except (ValueError, OverflowError): return b'{}'


def _make(p, kind, outside):
    if kind == 'fifo': os.mkfifo(p)
    elif kind == 'link_file': p.symlink_to(outside / 'file')
    elif kind == 'link_dir': p.symlink_to(outside / 'dir')
    elif kind == 'link_dev_zero': p.symlink_to('/dev/zero')
    else: p.mkdir()


@st.composite
def prepared(draw):
    return dict(config=draw(st.one_of(st.just(CONFIGS[0]), st.just(CONFIGS[0]), st.sampled_from(CONFIGS), st.binary(max_size=60))),
                evaluation=draw(st.one_of(st.none(), st.just(VALID_EVALUATION), st.just(VALID_EVALUATION),
                                          json_values.map(_json_bytes), st.binary(max_size=40))),
                metrics=draw(st.one_of(st.none(), st.just(VALID_METRICS), st.just(VALID_METRICS),
                                       st.lists(json_values.map(_json_bytes), max_size=5).map(b'\n'.join),
                                       st.binary(max_size=40))),
                ckpt=draw(st.one_of(st.just(CKPT), st.binary(max_size=30))),
                special=draw(st.one_of(st.none(), st.none(), st.tuples(st.sampled_from(ENTRIES), st.sampled_from(SPECIALS)))),
                command=draw(st.sampled_from(['compare', 'plot', 'export', 'export', 'test', 'resume'])),
                out=draw(st.sampled_from(['new', 'fifo', 'folder', 'link', 'device', 'long', 'under_file', 'empty'])))


def _out_path(kind, root: Path, outside: Path):
    p = root / 'outs' / f'o{len(list((root / "outs").iterdir()))}'
    if kind == 'fifo': os.mkfifo(p)
    elif kind == 'folder': p.mkdir()
    elif kind == 'link': p.symlink_to(outside / 'file')
    elif kind == 'device':
        if os.geteuid() != 0: return p
        os.mknod(p, 0o666 | _stat.S_IFCHR, os.makedev(1, 3))     # a /dev/null of our own: never the machine's
    elif kind == 'long': return root / 'outs' / ('x' * 300)
    elif kind == 'under_file': return outside / 'file' / 'out'
    elif kind == 'empty': return ''
    return p


def _snapshot(root: Path) -> dict:
    "Every path under `root` (not following links) with its kind and, for files, its bytes."
    out = {}
    for p in [root, *root.rglob('*')]:
        st_ = os.lstat(p)
        out[p] = (_stat.S_IFMT(st_.st_mode), p.read_bytes() if _stat.S_ISREG(st_.st_mode) else None)
    return out


def _cli_with_alarm(argv, seconds=60):
    def hung(*_): raise TimeoutError(f'reaver {argv} hung')
    old = signal.signal(signal.SIGALRM, hung); signal.alarm(seconds)
    try: return run_cli([str(a) for a in argv])
    finally: signal.alarm(0); signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp('hostile')
    outside = root / 'outside'; (outside / 'dir').mkdir(parents=True); (outside / 'file').write_text('keep me')
    (root / 'outs').mkdir()
    return root, outside


@seed(20261206)
@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(case=prepared())
def test_prepared_run_folders_and_out_paths_never_trace_back(world, case):
    root, outside = world
    res = root / 'results'; shutil.rmtree(res, ignore_errors=True)
    run = res / 'r'; (run / 'checkpoints').mkdir(parents=True); (run / 'tb').mkdir()
    (run / 'config.gin').write_bytes(case['config'])
    (run / 'checkpoints' / 'ckpt_0000000005.msgpack').write_bytes(case['ckpt'])
    if case['evaluation'] is not None: (run / 'evaluation.json').write_bytes(case['evaluation'])
    if case['metrics'] is not None: (run / 'metrics.jsonl').write_bytes(case['metrics'])
    if case['special']:
        entry, kind = case['special']; p = run / entry
        if p.is_dir(): shutil.rmtree(p)
        else: p.unlink(missing_ok=True)
        _make(p, kind, outside)
    out = _out_path(case['out'], root, outside)
    argv = {'compare': ['compare', 'r'], 'plot': ['plot', 'r', '--out', out], 'export': ['export', 'r', '--out', out],
            'test': ['test', 'r', '--episodes', '1'], 'resume': ['train', '--resume', '--run-id', 'r', '--steps', '64']}
    before = {p: v for p, v in _snapshot(root).items() if res not in p.parents and p != res}
    staged = set(Path(tempfile.gettempdir()).glob('reaver_import_*'))
    code, o, err = _cli_with_alarm([*argv[case['command']], '--results-dir', res])
    event(f"{case['command']} exit {code}")
    assert 'Traceback' not in err + o and code in (0, 2), (case, code, err[-2000:])
    if code == 2: assert len(err.strip().splitlines()) == 1, (case, err)
    after = {p: v for p, v in _snapshot(root).items() if res not in p.parents and p != res}
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    allowed = {Path(out)} if out else set()
    if out and Path(out).name: allowed |= {p for p in changed if p.parent == Path(out) or Path(out) in p.parents}
    assert changed <= allowed | {root / 'outs'}, (case, sorted(map(str, changed - allowed)))
    assert (outside / 'file').read_text() == 'keep me' and not any((outside / 'dir').iterdir())
    assert set(Path(tempfile.gettempdir()).glob('reaver_import_*')) == staged


def _archive(members) -> bytes:
    "A .tar.gz (in memory) of (name, data, type) members."
    buf = _io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w:gz') as t:
        for name, data, kind in members:
            info = tarfile.TarInfo(name); info.type = kind; info.size = len(data) if kind == tarfile.REGTYPE else 0
            if kind == tarfile.SYMTYPE: info.linkname = '/etc/passwd'
            t.addfile(info, _io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return buf.getvalue()


GOOD = {'config.gin': CONFIGS[0], 'checkpoints/ckpt_0000000005.msgpack': CKPT, 'evaluation.json': b'{"env": "x", "returns": [1]}'}


@st.composite
def archives(draw):
    files = dict(GOOD)
    for _ in range(draw(st.integers(0, 3))):
        files[draw(st.sampled_from(['config.gin', 'metrics.jsonl', 'evaluation.json', 'x.py', 'checkpoints/ckpt_1.msgpack',
                                    '../x', 'evaluation.json\n', 'tb/events.out.tfevents.1', 'videos/a.gif']))] = \
            draw(st.one_of(st.sampled_from(CONFIGS), st.binary(max_size=40), json_values.map(_json_bytes)))
    manifest = {k: dict(bytes=len(v), sha256=hashlib.sha256(v).hexdigest()) for k, v in files.items()}
    if draw(st.booleans()):   # a manifest that lies or is not one
        manifest = draw(st.one_of(json_values, st.just({k: dict(bytes=1e400, sha256='0') for k in files})))
    members = [('r/MANIFEST.json', _json_bytes(dict(files=manifest)), tarfile.REGTYPE)]
    members += [(f'r/{k}', v, tarfile.REGTYPE) for k, v in files.items()]
    if draw(st.booleans()): members.insert(draw(st.integers(0, len(members))), (draw(st.sampled_from(
        ['r/link', 'r/config.gin', 'other/x', '/abs', 'r/dir'])), b'', draw(st.sampled_from(
        [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE, tarfile.REGTYPE]))))
    data = _archive(members)
    mangle = draw(st.sampled_from(['none', 'none', 'truncate', 'flip', 'raw tar']))
    if mangle == 'truncate': data = data[:draw(st.integers(0, len(data)))]
    elif mangle == 'flip':
        i = draw(st.integers(0, len(data) - 1)); data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
    elif mangle == 'raw tar': data = gzip.decompress(data)
    return data, draw(st.booleans())


@seed(20261206)
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(case=archives())
def test_imported_archives_never_trace_back(world, case):
    root, outside = world
    data, force = case
    res = root / 'imports'; shutil.rmtree(res, ignore_errors=True)
    p = root / 'a.reaver.tar.gz'; p.write_bytes(data)
    staged = set(Path(tempfile.gettempdir()).glob('reaver_import_*'))
    code, o, err = _cli_with_alarm(['import', p, '--results-dir', res, *(['--force'] if force else [])])
    event(f'import exit {code}')
    assert 'Traceback' not in err + o and code in (0, 2), (code, err[-2000:])
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and len(err) < 1000, err
        assert not res.exists() or not any(res.iterdir())
    else:
        assert sorted(q.name for q in res.iterdir()) == ['r'] and not any(q.is_symlink() for q in res.rglob('*'))
    assert set(Path(tempfile.gettempdir()).glob('reaver_import_*')) == staged
    assert (outside / 'file').read_text() == 'keep me'
