"""A shared run can never attack its user: archive attacks are refused with one clear line, no code runs, memory stays
bounded, and nothing is written inside or outside the results directory."""
import gzip, hashlib, io, json, os, sys, tarfile, tempfile, textwrap
from pathlib import Path
import pytest
from conftest import reaver
from reaver_nb import archive
from reaver_nb.archive import UnsafeArchive, import_run, fetch_archive

CONFIG = b"RunSettings.env = 'jax:MoveToBeacon'\nRunSettings.seed = 3\n"
CKPT = b'\x81\xa6frames\x05'            # a msgpack map {'frames': 5}
PWNED = 'reaver_nb_pwned'               # what an attack's code would create in the temp folder


def member(tar, name, data=b'', kind=tarfile.REGTYPE, link='', size=None):
    info = tarfile.TarInfo(name); info.type = kind; info.linkname = link; info.mode = 0o644
    info.size = len(data) if size is None else size
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def manifest(files: dict) -> bytes:
    return json.dumps(dict(files={k: dict(bytes=len(v), sha256=hashlib.sha256(v).hexdigest())
                                  for k, v in files.items()})).encode()


def make(path: Path, files: dict, run='r', extra=(), manifest_first=True, listed=None):
    "An archive of `files` (+ raw `extra` members) under folder `run`, with a manifest of `listed` (default: files)."
    m = manifest(files if listed is None else listed)
    with tarfile.open(path, 'w:gz') as tar:
        if manifest_first: member(tar, f'{run}/MANIFEST.json', m)
        for k, v in files.items(): member(tar, f'{run}/{k}', v)
        for args in extra: member(tar, *args)
        if not manifest_first: member(tar, f'{run}/MANIFEST.json', m)
    return path


@pytest.fixture
def where(tmp_path):
    "The results dir, and a check that an import left nothing in it or in the temp folder's staging area."
    res = tmp_path / 'results'
    before = set(Path(tempfile.gettempdir()).glob('reaver_import_*'))
    yield res
    assert not res.exists() or [p.name for p in res.iterdir()] in ([], ['ok']), list(res.iterdir())
    assert set(Path(tempfile.gettempdir()).glob('reaver_import_*')) == before
    assert not (Path(tempfile.gettempdir()) / PWNED).exists()


def refused(path, res, contains):
    with pytest.raises(UnsafeArchive) as e: import_run(path, res)
    assert contains in str(e.value), str(e.value)
    assert '\n' not in str(e.value)
    return str(e.value)


def test_a_valid_archive_imports_and_its_config_is_rewritten(tmp_path, where):
    p = make(tmp_path / 'a.tar.gz', {'config.gin': b'# a comment\r\n' + CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT})
    got = import_run(p, where, run_id='ok')
    text = (got / 'config.gin').read_text()
    assert text.splitlines()[1:] == ["RunSettings.env = 'jax:MoveToBeacon'", 'RunSettings.seed = 3']
    assert (got / 'checkpoints/ckpt_0000000005.msgpack').read_bytes() == CKPT


def test_old_archives_with_the_manifest_last_still_import(tmp_path, where):
    p = make(tmp_path / 'a.tar.gz', {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT},
             manifest_first=False)
    import_run(p, where, run_id='ok')


GIN_ATTACKS = [
    (b"import os\n", 'would import Python code'),
    (b"from __gin__ import dynamic_registration\nimport subprocess\nsubprocess.run.args = 'touch pwned'\n", 'import'),
    (b"\xef\xbb\xbfimport os\n", 'would import'),                         # behind a UTF-8 byte-order mark
    (b"RunSettings.seed = 1\rimport os\r", 'would import'),                  # old Mac line endings
    (b"RunSettings.seed = 1\r\nimport os\r\n", 'would import'),              # Windows line endings
    (b"RunSettings.seed = 1 \\\nimport os\n", 'does not parse'),             # a continuation
    (b"  import os\n", 'would import'),                                      # indented
    (b"include '/etc/passwd'\n", 'another file'),
    (b"RunSettings.env = @subprocess.run()\n", "not one of reaver_nb's configurables"),
    (b"gin.singleton.constructor = @RunSettings\n", "not one of reaver_nb's configurables"),
    (b"RunSettings.env = %MACRO\nMACRO = 1\n", 'macros'),
    (b"os.system.command = 'touch reaver_nb_pwned'\n", "not one of reaver_nb's configurables"),
    ("RunSettings.env = 'x'".encode('utf-16'), 'not UTF-8'),                  # a UTF-16 byte-order mark
    ("RunSettings.env = 'x'".encode('utf-32'), 'not UTF-8'),
    (b"RunSettings.env = 'x'\x00import os\n", 'control or format character'),
    ("RunSettings.env = 'jax:MoveToBeacon' #\u202e\nimport os\n".encode(), 'format character'),
    (b"RunSettings.env = b'abc'\n", 'bytes value'),
    (b"RunSettings.bogus = 1\n", "no parameter 'bogus'"),
    (b"RunSettings.seed = " + b"9" * 5000 + b"\n", 'does not parse'),         # past Python's int digits limit
    (b"RunSettings.env = " + b"(" * 500 + b")" * 500 + b"\n", ''),             # deep nesting
    (b"x" * (2 << 20), 'at most'),
]


@pytest.mark.parametrize('config,contains', GIN_ATTACKS, ids=range(len(GIN_ATTACKS)))
def test_config_attacks_are_refused(tmp_path, where, config, contains):
    p = make(tmp_path / 'a.tar.gz', {'config.gin': config, 'checkpoints/ckpt_0000000005.msgpack': CKPT})
    refused(p, where, contains)


PICKLE = b'\x80\x04\x95\x1f\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x02id\x94\x85\x94R\x94.'


@pytest.mark.parametrize('files,extra,contains', [
    ({'checkpoints/ckpt_0000000005.msgpack': PICKLE}, (), 'not a msgpack checkpoint'),
    ({'checkpoints/ckpt_0000000005.pkl': PICKLE}, (), 'not a file a run directory holds'),
    ({}, [('r/../../escape', b'x')], 'outside the run folder'),
    ({}, [('/abs/escape', b'x')], 'outside the run folder'),
    ({}, [('r\\..\\escape', b'x')], 'outside the run folder'),
    ({}, [('r/tb/events.out.tfevents.x', b'', tarfile.SYMTYPE, '/etc/passwd')], 'link'),
    ({}, [('r/tb/events.out.tfevents.x', b'', tarfile.LNKTYPE, 'r/config.gin')], 'link'),
    ({}, [('r/tb/events.out.tfevents.x', b'', tarfile.FIFOTYPE)], 'special file'),
    ({}, [('r/config.gin', CONFIG)], 'appears twice'),
    ({}, [('other/config.gin', CONFIG)], 'one folder'),
    ({}, [('r/train.log', b'not listed')], 'not listed in MANIFEST.json'),
])
def test_member_attacks_are_refused(tmp_path, where, files, extra, contains):
    base = {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT}
    p = make(tmp_path / 'a.tar.gz', {**base, **files}, extra=extra)
    refused(p, where, contains)


def test_mismatched_manifests_are_refused(tmp_path, where):
    files = {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT}
    refused(make(tmp_path / 'a.tar.gz', files, listed={**files, 'train.log': b'x'}), where, 'disagree')
    refused(make(tmp_path / 'b.tar.gz', files, listed={**files, 'config.gin': CONFIG + b'#'}), where, 'MANIFEST.json says')
    refused(make(tmp_path / 'c.tar.gz', files, listed={**files, 'config.gin': CONFIG.upper()}), where, 'SHA-256')
    with tarfile.open(tmp_path / 'd.tar.gz', 'w:gz') as tar:
        member(tar, 'r/MANIFEST.json', b'{"files": 5}')
    refused(tmp_path / 'd.tar.gz', where, 'not a reaver_nb manifest')
    refused(make(tmp_path / 'e.tar.gz', files, manifest_first=False, listed={}), where, 'not listed')


def test_not_an_archive(tmp_path, where):
    (tmp_path / 'x.tar.gz').write_bytes(b'PK\x03\x04 a zip, not a tar')
    refused(tmp_path / 'x.tar.gz', where, 'not a readable .tar.gz run archive')
    good = make(tmp_path / 'g.tar.gz', {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT})
    (tmp_path / 't.tar.gz').write_bytes(good.read_bytes()[:-40])                   # truncated
    refused(tmp_path / 't.tar.gz', where, '')                                     # whichever check sees it first


def test_member_count_is_capped(tmp_path, where, monkeypatch):
    monkeypatch.setattr(archive, 'MAX_MEMBERS', 20)
    files = {'config.gin': CONFIG, 'checkpoints/ckpt_0000000005.msgpack': CKPT,
             **{f'plots/p{i}.png': b'x' for i in range(30)}}
    refused(make(tmp_path / 'a.tar.gz', files), where, 'MANIFEST.json lists 32 files; at most 20')
    refused(make(tmp_path / 'b.tar.gz', files, manifest_first=False), where, 'more than 20 members')


def bomb(path: Path, size: int, listed: int | None = None):
    "A gzip of `size` zero bytes as one checkpoint member, written without ever holding them in memory."
    m = {'config.gin': (len(CONFIG), hashlib.sha256(CONFIG).hexdigest()),
         'checkpoints/ckpt_0000000005.msgpack': (size if listed is None else listed, '0' * 64)}
    mdata = json.dumps(dict(files={k: dict(bytes=n, sha256=h) for k, (n, h) in m.items()})).encode()
    class Zeros(io.RawIOBase):
        def __init__(self, n): self.left = n
        def readable(self): return True
        def readinto(self, b):
            n = min(len(b), self.left); b[:n] = bytes(n); self.left -= n; return n
    with gzip.open(path, 'wb', compresslevel=1) as gz, tarfile.open(fileobj=gz, mode='w|') as tar:
        member(tar, 'r/MANIFEST.json', mdata); member(tar, 'r/config.gin', CONFIG)
        info = tarfile.TarInfo('r/checkpoints/ckpt_0000000005.msgpack'); info.size = size
        tar.addfile(info, io.BufferedReader(Zeros(size), 1 << 20))
    return path


def test_a_1_gib_bomb_is_refused_with_bounded_memory(tmp_path, where):
    "A 1 GiB member (about 1 MB of gzip) is refused from its header; the importing process stays small."
    p = bomb(tmp_path / 'bomb.tar.gz', 1 << 30)
    assert p.stat().st_size < 8 << 20
    code = textwrap.dedent(f"""
        import resource, sys
        from reaver_nb.archive import import_run, UnsafeArchive
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try: import_run({str(p)!r}, {str(where)!r})
        except UnsafeArchive as e: print('refused:', e)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f'peak_rss_mib {{peak / 1024:.0f}} growth_mib {{(peak - base) / 1024:.1f}}')
    """)
    import subprocess
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert 'refused:' in r.stdout and 'over the limit' in r.stdout, r.stdout + r.stderr
    growth = float(r.stdout.split('growth_mib')[1])
    assert growth < 64, r.stdout          # reading the header costs nothing like the member's size
    print(r.stdout)


def test_a_bomb_under_the_member_cap_with_a_matching_size_is_capped_in_total(tmp_path, where, monkeypatch):
    "Under a lowered total cap, a member whose manifest entry matches streams to the staging folder, never memory."
    monkeypatch.setattr(archive, 'MAX_TOTAL_BYTES', 4 << 20)
    refused(bomb(tmp_path / 'b.tar.gz', 8 << 20), where, 'more than 4,194,304 bytes')
    # a lying manifest (the size says 1 byte): refused before the member is read
    refused(bomb(tmp_path / 'c.tar.gz', 2 << 20, listed=1), where, 'MANIFEST.json says 1 ')
    # the right size, the wrong hash: the bytes went to staging and are gone with it
    refused(bomb(tmp_path / 'd.tar.gz', 2 << 20), where, 'SHA-256')


def test_a_hand_placed_run_with_a_hostile_config_is_refused_by_test_and_resume(tmp_path):
    "A run directory copied by hand (not imported) gets the same strict reader on `test` and `--resume`."
    res = tmp_path / 'results'
    r = reaver('train', '--env', 'CartPole-v1', '--n-envs', '2', '--steps', '256', '--run-id', 'cp', '--results-dir', res,
               '--quiet', '--gin-param', 'PPO.minibatch_size = 32', '--gin-param', 'PPO.traj_len = 16')
    assert r.returncode == 0, r.stderr
    cfg = res / 'cp' / 'config.gin'
    cfg.write_text(cfg.read_text() + f"\nfrom __gin__ import dynamic_registration\nimport os\n"
                   f"os.system.command = 'touch {tempfile.gettempdir()}/{PWNED}'\n")
    for args in (('test', '--run-id', 'cp'), ('train', '--resume', '--run-id', 'cp', '--steps', '512')):
        r = reaver(*args, '--results-dir', res)
        assert r.returncode == 2 and 'would import Python code' in r.stderr and 'Traceback' not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert not (Path(tempfile.gettempdir()) / PWNED).exists()


def test_cli_import_is_one_line_and_exit_2(tmp_path):
    p = make(tmp_path / 'a.tar.gz', {'config.gin': b'import os\n', 'checkpoints/ckpt_0000000005.msgpack': CKPT})
    r = reaver('import', p, '--results-dir', tmp_path / 'res')
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and 'would import' in r.stderr, r.stderr
    assert not (tmp_path / 'res').exists()
    r = reaver('import', p, '--results-dir', tmp_path / 'res', '--run-id', '../../x')
    assert r.returncode == 2 and 'not a plain name' in r.stderr


def test_fetch_archive_is_https_only(tmp_path):
    for url, msg in (('http://127.0.0.1:1/a.reaver.tar.gz', 'https only'), ('file:///etc/passwd', 'https only'),
                     ('ftp://x/a.tar.gz', 'https only'), ('https://example.org/', 'plain file name'),
                     ('https://example.org/..', 'plain file name')):
        with pytest.raises(ValueError, match=msg): fetch_archive(url, tmp_path / 'dl')
    assert not (tmp_path / 'dl').exists()


def serve(folder: Path, redirects: dict | None = None):
    "A local http server of `folder`'s files; `redirects` maps paths to Location headers (302)."
    import http.server, threading, functools
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            if redirects and self.path in redirects:
                self.send_response(302); self.send_header('Location', redirects[self.path]); self.end_headers(); return
            super().do_GET()
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_fetch_archive_over_local_http_when_allowed(tmp_path):
    (tmp_path / 'srv' / 'b').mkdir(parents=True)
    (tmp_path / 'srv' / 'a.reaver.tar.gz').write_bytes(b'abc'); (tmp_path / 'srv' / 'b' / 'a.reaver.tar.gz').write_bytes(b'xyz')
    srv = serve(tmp_path / 'srv', {'/ftp/a.reaver.tar.gz': 'ftp://127.0.0.1/a.reaver.tar.gz'})
    base = f'http://127.0.0.1:{srv.server_port}'
    try:
        got = fetch_archive(f'{base}/a.reaver.tar.gz', tmp_path / 'dl', allow_http=True)
        assert got.read_bytes() == b'abc' and got.name == 'a.reaver.tar.gz'
        # the same file name at another URL is another download, never the first one's file
        other = fetch_archive(f'{base}/b/a.reaver.tar.gz', tmp_path / 'dl', allow_http=True)
        assert other.read_bytes() == b'xyz' and other != got
        # a cached copy changed since it was fetched is fetched again, not trusted
        got.write_bytes(b'tampered')
        assert fetch_archive(f'{base}/a.reaver.tar.gz', tmp_path / 'dl', allow_http=True).read_bytes() == b'abc'
        # a pinned digest that does not match keeps nothing
        with pytest.raises(ValueError, match='not the'):
            fetch_archive(f'{base}/b/a.reaver.tar.gz', tmp_path / 'dl2', allow_http=True, sha256='0' * 64)
        assert not list((tmp_path / 'dl2').rglob('*.tar.gz'))
        # a redirect to another scheme is refused before it is followed
        with pytest.raises(ValueError, match='another scheme'):
            fetch_archive(f'{base}/ftp/a.reaver.tar.gz', tmp_path / 'dl3', allow_http=True)
        assert not list((tmp_path / 'dl3').rglob('*.tar.gz'))
    finally: srv.shutdown()
