"""Hostile input, round two (issue 49): each of the review's ten classes, in variants of our own. Whatever a user
points the CLI at (device nodes, FIFOs, links, prepared run folders, crafted archives and checkpoints, bad JSON), the
answer is exit status 0 or one clear line with status 2, promptly, with bounded memory, nothing written where it
should not be and nothing left in the temp folder. Memory and time cases run in a subprocess and print their peak RSS
and seconds (`pytest -s` shows them)."""
import contextlib, gzip, hashlib, io, json, os, shutil, signal, stat, subprocess, sys, tarfile, tempfile, textwrap, time
from pathlib import Path
import pytest
from conftest import reaver
from reaver_nb.cli import main

CONFIG = b"RunSettings.env = 'CartPole-v1'\nRunSettings.agent = 'ppo'\n"
CKPT = b'\x81\xa6frames\x05'            # a msgpack map {'frames': 5}
ROOT = os.geteuid() == 0


def run_cli(*argv, timeout=120):
    "The CLI in this process (fast): (exit status, stdout, stderr); a hang past `timeout` fails the test."
    out, err = io.StringIO(), io.StringIO()
    def hung(*_): raise TimeoutError(f"reaver {' '.join(map(str, argv))} hung")
    old = signal.signal(signal.SIGALRM, hung); signal.alarm(timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try: code = main([str(a) for a in argv])
            except SystemExit as e: code = e.code
    finally: signal.alarm(0); signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue()


def one_line(code, out, err, *contains):
    "An error as the CLI must give it: status 2, one line naming what is wrong, no traceback."
    assert code == 2 and 'Traceback' not in err + out and len(err.strip().splitlines()) == 1, (code, err[-3000:])
    for c in contains: assert c in err, (c, err)
    assert len(err) < 1000, len(err)


def hand_run(root: Path, name='r', config=CONFIG, ckpt=CKPT) -> Path:
    "A run folder written by hand: config.gin and one checkpoint (what export and the readers need)."
    d = root / name; (d / 'checkpoints').mkdir(parents=True)
    (d / 'config.gin').write_bytes(config); (d / 'checkpoints' / 'ckpt_0000000005.msgpack').write_bytes(ckpt)
    return d


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    "A tiny real CartPole PPO run (in-process envs), copied by the tests that change it."
    res = tmp_path_factory.mktemp('trained')
    code, _, err = run_cli('train', '--env', 'CartPole-v1', '--agent', 'ppo', '--n-envs', '2', '--steps', '256',
                           '--run-id', 'cp', '--results-dir', res, '--quiet', '--gin-param', 'PPO.minibatch_size = 32',
                           '--gin-param', 'PPO.traj_len = 16', '--gin-param', "RunSettings.vector_env = 'inprocess'",
                           timeout=600)
    assert code == 0, err
    return res / 'cp'


def copy_run(trained, tmp_path, name='cp') -> Path:
    shutil.copytree(trained, tmp_path / 'res' / name)
    return tmp_path / 'res' / name


# 1. export --out PATH never replaces what is not a regular file -------------------------------------------------------
def test_1_export_out_refuses_devices_fifos_folders_and_links(tmp_path):
    run = hand_run(tmp_path / 'res')
    outside = tmp_path / 'outside.txt'; outside.write_text('keep me')
    targets = {'fifo': lambda p: os.mkfifo(p), 'folder': lambda p: p.mkdir(),
               'link': lambda p: p.symlink_to(outside), 'dangling link': lambda p: p.symlink_to(tmp_path / 'nowhere')}
    if ROOT: targets['device'] = lambda p: os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))   # /dev/null's numbers
    for kind, make in targets.items():
        p = tmp_path / 'out' / kind.replace(' ', '_'); p.parent.mkdir(exist_ok=True); make(p)
        before = os.lstat(p)
        one_line(*run_cli('export', run, '--out', p), '--out', 'not a regular file')
        after = os.lstat(p)
        assert (stat.S_IFMT(after.st_mode), after.st_ino) == (stat.S_IFMT(before.st_mode), before.st_ino), kind
    assert outside.read_text() == 'keep me' and not (tmp_path / 'nowhere').exists()
    assert sorted(q.name for q in (tmp_path / 'out').iterdir()) == sorted(k.replace(' ', '_') for k in targets)  # no .tmp
    existing = tmp_path / 'out' / 'old.reaver.tar.gz'; existing.write_text('old')             # a regular file: replaced
    assert run_cli('export', run, '--out', existing)[0] == 0 and tarfile.is_tarfile(existing)
    one_line(*run_cli('export', run, '--out', ''), "--out '' names no path")


# 2. a crafted checkpoint cannot make the reader allocate ------------------------------------------------------------
def _msgpack_floods():
    n = 8_000_000
    return {'empty arrays': b'\x81\xa1x\xdd' + n.to_bytes(4, 'big') + b'\x90' * n,
            'empty maps': b'\x81\xa1x\xdd' + n.to_bytes(4, 'big') + b'\x80' * n,
            'nested arrays': b'\x81\xa1x' + b'\x91' * 100_000 + b'\xc0',
            'a huge declared length': b'\x81\xa1x\xdd\xff\xff\xff\xff\x90',
            'an ndarray extension holding a flood': b'\x81\xa1x\xc9' + (n + 5).to_bytes(4, 'big') + b'\x01'
                                                    + b'\xdd' + n.to_bytes(4, 'big') + b'\x90' * n}


def peak(code: str, timeout=300) -> dict:
    "Run `code` (which prints lines) in a fresh Python; its output and its peak RSS growth over the imports, in MiB."
    prog = textwrap.dedent("""
        import resource, time, sys
        import reaver_nb.archive, reaver_nb.training.checkpoint, reaver_nb.results
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; t0 = time.time()
    """) + textwrap.dedent(code) + textwrap.dedent("""
        print(f"growth_mib={(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024:.1f} seconds={time.time() - t0:.2f}")
    """)
    r = subprocess.run([sys.executable, '-c', prog], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    stats = dict(kv.split('=') for kv in r.stdout.strip().splitlines()[-1].split())
    print(r.stdout.strip())
    return dict(out=r.stdout, growth=float(stats['growth_mib']), seconds=float(stats['seconds']))


@pytest.mark.parametrize('kind', list(_msgpack_floods()))
def test_2_checkpoint_floods_are_walked_not_decoded(tmp_path, kind):
    data = _msgpack_floods()[kind]
    ck = tmp_path / 'ckpt_0000000005.msgpack'; ck.write_bytes(data)
    archive = tmp_path / 'a.reaver.tar.gz'
    files = {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': data}
    manifest = json.dumps(dict(files={k: dict(bytes=len(v), sha256=hashlib.sha256(v).hexdigest())
                                      for k, v in files.items()})).encode()
    with tarfile.open(archive, 'w:gz') as t:
        for name, v in [('MANIFEST.json', manifest), *files.items()]:
            info = tarfile.TarInfo(f'r/{name}'); info.size = len(v); t.addfile(info, io.BytesIO(v))
    got = peak(f"""
        from reaver_nb.archive import import_run, UnsafeArchive
        from reaver_nb.training.checkpoint import read_checkpoint
        try: import_run({str(archive)!r}, {str(tmp_path / 'res')!r}); print('imported')
        except UnsafeArchive as e: print('import refused:', e)
        try: read_checkpoint({str(ck)!r}); print('read')
        except ValueError as e: print('read refused:', e)
    """)
    assert 'import refused' in got['out'] and 'read refused' in got['out'], got['out']
    assert got['growth'] < 64 and got['seconds'] < 30, got     # decoded, an 8M-item flood takes gigabytes
    assert not (tmp_path / 'res').exists()


# 3. tar headers: capped before anything reads them whole; nothing left in the temp folder ----------------------------
def _big_header(path: Path, kind: bytes, n: int) -> Path:
    """A .tar.gz whose member r/config.gin comes after an extended header of `n` bytes: a GNU long name (`L`) or a PAX
    record `path=r/xxx...` (`x`), written block by block (tarfile takes minutes to write a 100 MB PAX header)."""
    def block(name: bytes, kind: bytes, size: int) -> bytes:
        h = bytearray(512); h[:len(name)] = name; h[100:108] = b'0000644\0'; h[124:136] = b'%011o\0' % size
        h[136:148] = b'00000000000\0'; h[156:157] = kind; h[257:265] = b'ustar\x0000'; h[148:156] = b' ' * 8
        h[148:156] = b'%06o\0 ' % sum(h); return bytes(h)
    head = b'%d path=r/' % n if kind == b'x' else b''
    with gzip.open(path, 'wb', compresslevel=6) as gz:
        gz.write(block(b'././@LongLink' if kind == b'L' else b'PaxHeader/x', kind, n) + head)
        left, chunk = n - len(head) - 1, b'x' * (1 << 20)
        while left: gz.write(chunk[:min(left, len(chunk))]); left -= min(left, len(chunk))
        gz.write(b'\n' + b'\0' * (-n % 512))
        gz.write(block(b'r/config.gin', b'0', 0) + b'\0' * 1024)
    return path


@pytest.mark.parametrize('kind', ['gnu long name 200 MB', 'pax path 100 MB', 'pax record, quadratic for tarfile'])
def test_3_tar_headers_are_capped(tmp_path, kind):
    if kind.startswith('gnu'): p = _big_header(tmp_path / 'a.tar.gz', b'L', 200 << 20)
    elif kind.startswith('pax path'): p = _big_header(tmp_path / 'a.tar.gz', b'x', 100 << 20)
    else:   # CVE-2024-6232: tarfile's PAX regex backtracks on long runs; ours is one pass over at most 64 KiB
        info = tarfile.TarInfo('r/config.gin'); info.pax_headers = {'comment': '0' * 60_000, 'x': '1 ' * 2_000}
        p = tmp_path / 'a.tar.gz'
        with tarfile.open(p, 'w:gz', format=tarfile.PAX_FORMAT) as t: t.addfile(info, io.BytesIO(b''))
    assert p.stat().st_size < 2 << 20
    tmpdir = tmp_path / 'tmp'; tmpdir.mkdir()
    got = peak(f"""
        import tempfile; tempfile.tempdir = {str(tmpdir)!r}
        from reaver_nb.archive import import_run, UnsafeArchive
        try: import_run({str(p)!r}, {str(tmp_path / 'res')!r}); print('imported')
        except UnsafeArchive as e: print('refused:', e)
    """)
    line = got['out'].splitlines()[0]
    assert line.startswith('refused:') and len(line) < 500, line[:1000]
    assert got['growth'] < 32 and got['seconds'] < 20, got
    assert not any(tmpdir.iterdir()) and not (tmp_path / 'res').exists()


def test_3_a_killed_import_leaves_nothing_in_the_temp_folder(tmp_path):
    "SIGTERM in the middle of an import: the staging folder goes with it (the CLI turns the kill into an exit)."
    big = os.urandom(1 << 20) * 200            # 200 MiB that gzip cannot shrink much: seconds to stream
    files = {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': big}
    manifest = json.dumps(dict(files={k: dict(bytes=len(v), sha256=hashlib.sha256(v).hexdigest())
                                      for k, v in files.items()})).encode()
    p = tmp_path / 'big.reaver.tar.gz'
    with tarfile.open(p, 'w:gz', compresslevel=1) as t:
        for name, v in [('MANIFEST.json', manifest), *files.items()]:
            info = tarfile.TarInfo(f'r/{name}'); info.size = len(v); t.addfile(info, io.BytesIO(v))
    del big, files
    tmpdir = tmp_path / 'tmp'; tmpdir.mkdir()
    proc = subprocess.Popen([sys.executable, '-m', 'reaver_nb', 'import', str(p), '--results-dir', str(tmp_path / 'res')],
                            env=dict(os.environ, TMPDIR=str(tmpdir)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not any(tmpdir.glob('reaver_import_*/**/*.msgpack')) and time.time() < deadline: time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, proc.returncode
    assert not any(tmpdir.iterdir()), list(tmpdir.iterdir())
    assert not (tmp_path / 'res').exists() or not any((tmp_path / 'res').iterdir())


# 5. an accepted config never crashes a command -----------------------------------------------------------------------
@pytest.mark.parametrize('binding, says', [
    ("RunSettings.env = @RunSettings()", 'is a reference to a configurable'),
    ("RunSettings.seed = @RunSettings", 'is a reference to a configurable'),
    ("SC2Settings.screen_features = (@A2C(),)", 'is a reference to a configurable'),
    ("make_model.activation = 'gelu'", "use one of ('tanh', 'relu')"),
    ("make_model.hidden = (64, -1)", 'layer widths'),
    ("GymSettings.make_kwargs = {'bogus': 1}", "takes no argument 'bogus'"),
    ("PPO.lr_schedule = 'cosine'", "use 'constant' or 'linear'"),
    ("RunSettings.vector_env = 7", 'has the wrong type'),
    ("HeadRestart.heads = (1, 2)", 'give a tuple of names'),
])
def test_5_a_config_that_would_crash_is_refused_by_test_resume_and_import(trained, tmp_path, binding, says):
    run = copy_run(trained, tmp_path)
    cfg = run / 'config.gin'
    cfg.write_text(cfg.read_text() + binding + '\n')
    for argv in (('test', 'cp', '--episodes', '2'), ('train', '--resume', '--run-id', 'cp', '--steps', '512')):
        one_line(*run_cli(*argv, '--results-dir', tmp_path / 'res'), says)
    # the same config inside an archive is refused by the import, before anything lands
    cfg.write_text(CONFIG.decode() + binding + '\n')
    code, _, err = run_cli('export', run, '--out', tmp_path / 'x.reaver.tar.gz')
    assert code == 0, err
    one_line(*run_cli('import', tmp_path / 'x.reaver.tar.gz', '--results-dir', tmp_path / 'theirs'), says)
    assert not (tmp_path / 'theirs').exists()


def test_5_bad_make_kwargs_in_worker_processes_are_one_line_without_restarts(tmp_path):
    t0 = time.time()
    one_line(*run_cli('train', '--env', 'CartPole-v1', '--steps', '256', '--results-dir', tmp_path / 'res',
                      '--gin-param', "GymSettings.make_kwargs = {'bogus': 1}"), "takes no argument 'bogus'")
    assert time.time() - t0 < 30 and not (tmp_path / 'res').exists()


# 6. malformed data: manifests, evaluations, metrics ------------------------------------------------------------------
BAD_EVALUATIONS = [b'', b'not json', b'[1, 2]', b'{"env": "x"}', b'{"returns": [1]}', b'{"env": 5, "returns": [1]}',
                   b'{"env": "x", "returns": []}', b'{"env": "x", "returns": "abc"}', b'{"env": "x", "returns": [1, null]}',
                   b'{"env": "x", "returns": [1e400]}', b'{"env": "x", "returns": [NaN]}', b'{"env": "x", "returns": [true]}',
                   b'{"env": "x", "returns": [1], "train_seeds": 3}', b'{"env": "x", "returns": [1], "frames": "many"}',
                   b'[' * 100_000 + b']' * 100_000, b'{"env": "' + b'x' * 300 + b'", "returns": [1]}',
                   b'\xff\xfe{"env"', b'{"env": "x", "returns": [1], "agent": 3}']
BAD_METRICS = [b'', b'garbage\n', b'{"frames": "x", "time": 1}\n', b'{"frames": 1, "time": "x"}\n',
               b'{"frames": 1, "ep_return_mean": [1, 2]}\n', b'{"frames": 1e400}\n', b'[' * 100_000 + b'\n',
               b'{"frames": 1, "time": 1, "ep_return_mean": {"a": 1}}\n{"frames": 1, "time": 1}\n']


@pytest.mark.parametrize('i', range(len(BAD_EVALUATIONS)))
def test_6_compare_and_plot_over_a_bad_evaluation(tmp_path, i):
    run = hand_run(tmp_path / 'res')
    (run / 'evaluation.json').write_bytes(BAD_EVALUATIONS[i])
    (run / 'metrics.jsonl').write_text('{"frames": 8, "time": 1, "ep_return_mean": 1.5}\n')
    for argv in (('compare', 'r'), ('plot', 'r', '--out', tmp_path / 'plots')):
        code, out, err = run_cli(*argv, '--results-dir', tmp_path / 'res')
        if code != 0: one_line(code, out, err)
        assert 'Traceback' not in out + err


@pytest.mark.parametrize('i', range(len(BAD_METRICS)))
def test_6_plot_over_bad_metrics(tmp_path, i):
    run = hand_run(tmp_path / 'res')
    (run / 'metrics.jsonl').write_bytes(BAD_METRICS[i])
    code, out, err = run_cli('plot', 'r', '--out', tmp_path / 'plots', '--results-dir', tmp_path / 'res')
    if code != 0: one_line(code, out, err)


def test_6_terminal_escapes_are_shown_escaped(tmp_path):
    run = hand_run(tmp_path / 'res')
    (run / 'evaluation.json').write_text(json.dumps(dict(env='jax:MoveToBeacon\x1b]0;owned\x07\x1b[2J', agent='a\r\x1b[1A',
                                                         returns=[1.0])))
    code, out, err = run_cli('compare', 'r', '--results-dir', tmp_path / 'res')
    assert code == 0 and '\x1b' not in out + err and '\r' not in out and '\\x1b' in out, out


def test_6_a_32_mb_metrics_line_is_skipped_with_bounded_memory(tmp_path):
    run = hand_run(tmp_path / 'res')
    with open(run / 'metrics.jsonl', 'wb') as f:
        f.write(b'{"frames": 8, "time": 1, "ep_return_mean": 1.5}\n{"frames": 16, "x": [' + b'1.5,' * (8 << 20) + b'1]}\n'
                b'{"frames": 24, "time": 2, "ep_return_mean": 2.5}\n')
    got = peak(f"""
        from reaver_nb.results import learning_curves
        c = learning_curves(['r'], results_dir={str(tmp_path / 'res')!r})
        print('points', c['CartPole-v1', 'ppo'].returns.tolist())
    """)
    assert 'points [[1.5, 2.5]]' in got['out'] and got['growth'] < 64, got     # read whole it took over a GB


# 7. a member name with a line break or other whitespace at its end ------------------------------------------------
@pytest.mark.parametrize('suffix', ['\n', '\r', ' ', '\t', '\n\n'])
def test_7_member_names_must_match_whole(tmp_path, suffix):
    files = {'MANIFEST.json': None, 'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT}
    listed = {k: v for k, v in files.items() if v is not None}
    listed[f'evaluation.json{suffix}'] = b'{}'
    manifest = json.dumps(dict(files={k: dict(bytes=len(v), sha256=hashlib.sha256(v).hexdigest())
                                      for k, v in listed.items()})).encode()
    p = tmp_path / 'a.reaver.tar.gz'
    with tarfile.open(p, 'w:gz') as t:
        for name, v in [('MANIFEST.json', manifest), *listed.items()]:
            info = tarfile.TarInfo(f'r/{name}'); info.size = len(v); t.addfile(info, io.BytesIO(v))
    one_line(*run_cli('import', p, '--results-dir', tmp_path / 'res'), 'not a file a run directory holds')
    assert not (tmp_path / 'res').exists()


# 8. run folders: no links followed, no special file read or waited on ------------------------------------------------
@pytest.mark.parametrize('entry, make', [
    ('checkpoints', 'link to folder'), ('tb', 'link to folder'), ('train.log', 'link to file'),
    ('metrics.jsonl', 'link to file'), ('config.gin', 'fifo'), ('config.gin', 'link to /dev/zero'),
    ('checkpoints/ckpt_0000000256.msgpack', 'fifo'), ('checkpoints/ckpt_0000000256.msgpack', 'link to file'),
    ('environment.jsonl', 'link to file'), ('evaluation.json', 'fifo')])
def test_8_prepared_run_folders_are_refused(trained, tmp_path, entry, make):
    run = copy_run(trained, tmp_path)
    outside = tmp_path / 'outside'; (outside / 'dir').mkdir(parents=True)
    (outside / 'file').write_text('keep me'); (outside / 'dir' / 'ckpt_0000000001.msgpack').write_bytes(CKPT)
    p = run / entry
    if p.is_dir(): shutil.rmtree(p)
    else: p.unlink(missing_ok=True)
    if make == 'fifo': os.mkfifo(p)
    elif make == 'link to folder': p.symlink_to(outside / 'dir')
    elif make == 'link to file': p.symlink_to(outside / 'file')
    else: p.symlink_to('/dev/zero')
    before = {q: q.read_bytes() for q in outside.rglob('*') if q.is_file()}
    res = tmp_path / 'res'
    for argv in (('test', 'cp', '--episodes', '2'), ('train', '--resume', '--run-id', 'cp', '--steps', '512'),
                 ('export', 'cp', '--out', tmp_path / 'cp.reaver.tar.gz'), ('compare', 'cp'), ('plot', 'cp', '--out', tmp_path / 'p')):
        one_line(*run_cli(*argv, '--results-dir', res, timeout=60), 'cp')
    assert {q: q.read_bytes() for q in outside.rglob('*') if q.is_file()} == before
    assert sorted(q.name for q in outside.rglob('*')) == ['ckpt_0000000001.msgpack', 'dir', 'file']


def test_8_import_force_onto_a_file_or_link_is_refused(tmp_path):
    run = hand_run(tmp_path / 'mine')
    archive = tmp_path / 'r.reaver.tar.gz'
    assert run_cli('export', run, '--out', archive)[0] == 0
    res = tmp_path / 'res'; res.mkdir()
    (tmp_path / 'elsewhere').mkdir(); (tmp_path / 'elsewhere' / 'precious').write_text('keep')
    (res / 'r').write_text('a file, not a run')
    one_line(*run_cli('import', archive, '--results-dir', res, '--force'), 'is a regular file, not a folder')
    (res / 'r').unlink(); (res / 'r').symlink_to(tmp_path / 'elsewhere')
    one_line(*run_cli('import', archive, '--results-dir', res, '--force'), 'is a symbolic link, not a folder')
    assert (tmp_path / 'elsewhere' / 'precious').read_text() == 'keep' and (res / 'r').is_symlink()


# 9. CLI input that traced back or hung ---------------------------------------------------------------------------
def test_9_paths_the_system_refuses_are_one_line(tmp_path):
    long_part, long_path = 'x' * 300, '/'.join(['y' * 200] * 30)
    for argv, says in [(('train', '--dry-run', '--results-dir', tmp_path / long_part), 'File name too long'),
                       (('train', '--dry-run', '--results-dir', long_path), 'File name too long'),
                       (('test', 'r', '--results-dir', tmp_path / long_part), 'File name too long'),
                       (('compare', 'r', '--results-dir', tmp_path / long_part), 'r'),
                       (('export', 'r', '--results-dir', tmp_path / long_part), 'r'),
                       (('import', tmp_path / long_part), 'File name too long'),
                       (('train', '--results-dir', ''), "--results-dir '' names no path"),
                       (('compare', 'r', '--results-dir', ''), "--results-dir '' names no path")]:
        one_line(*run_cli(*argv), says)
    if ROOT and Path('/sys/kernel').is_dir():    # root may "write" there by the permission bits, and cannot
        one_line(*run_cli('train', '--env', 'CartPole-v1', '--steps', '256', '--results-dir', '/sys/kernel/reaver_x',
                          '--gin-param', "RunSettings.vector_env = 'inprocess'"))


def test_9_compare_on_dev_zero_or_a_fifo_is_prompt(tmp_path):
    os.mkfifo(tmp_path / 'fifo')
    t0 = time.time()
    for path in ('/dev/zero', tmp_path / 'fifo'):
        one_line(*run_cli('compare', path, timeout=20), 'not a regular file')
    assert time.time() - t0 < 10


def test_9_export_out_an_existing_folder_and_initialize_from_another_shape(trained, tmp_path):
    run = copy_run(trained, tmp_path)
    (tmp_path / 'folder').mkdir()
    one_line(*run_cli('export', run, '--out', tmp_path / 'folder'), 'is a folder')
    one_line(*run_cli('train', '--env', 'CartPole-v1', '--agent', 'ppo', '--n-envs', '2', '--steps', '256',
                      '--run-id', 'wide', '--initialize-from', 'cp', '--results-dir', tmp_path / 'res',
                      '--gin-param', 'make_model.hidden = (32,)', '--gin-param', "RunSettings.vector_env = 'inprocess'",
                      '--gin-param', 'PPO.minibatch_size = 32', '--gin-param', 'PPO.traj_len = 16'),
             'has shape')
    assert not (tmp_path / 'res' / 'wide').exists()
