"""Tests of the StarCraft II installer (reaver_nb/sc2/installer.py) against a local HTTP server serving small archives
laid out like the real ones: a ZipCrypto-encrypted game zip (StarCraftII/Versions/Base75689/SC2_x64, ...), an
unencrypted mini_games.zip and an encrypted ladder map pack. Every failure test also checks that no half-installed
game and no staging folder is left behind."""
import functools, hashlib, http.server, importlib, io, json, os, re, shutil, stat, struct, subprocess, sys, tempfile
import threading, types
import urllib.request, zipfile, zlib
from pathlib import Path
import pytest

sc2i = importlib.import_module("reaver_nb.sc2.installer")

PASSWORD = b'iagreetotheeula'
HAS_UNZIP = sc2i.shutil.which('unzip') is not None
EXTRACTORS = [pytest.param('unzip', marks=pytest.mark.skipif(not HAS_UNZIP, reason='no unzip program')), 'python']

# the ZipCrypto zip writer (Python's zipfile can only read encrypted zips) is the stand-in install's
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tools'))
from sc2_standin import ZipCrypto, make_zip

FILE, EXE, DIR, LINK = stat.S_IFREG | 0o644, stat.S_IFREG | 0o755, stat.S_IFDIR | 0o755, stat.S_IFLNK | 0o777
SC2_X64 = b'#!/bin/sh\necho "pretend StarCraft II"\n'

def game_entries(extra=()):
    return [('StarCraftII/', b'', DIR), ('StarCraftII/Versions/', b'', DIR),
            ('StarCraftII/Versions/Base75689/', b'', DIR),
            ('StarCraftII/Versions/Base75689/SC2_x64', SC2_X64, EXE),
            ('StarCraftII/Libs/x', b'lib' * 300, FILE), ('StarCraftII/SC2Data/x', b'data' * 500, FILE),
            ('StarCraftII/Maps/', b'', DIR), ('StarCraftII/Battle.net/x', b'bnet', FILE), *extra]

GAME_ZIP = make_zip(game_entries(), PASSWORD)
MINI_GAMES_ZIP = make_zip([('mini_games/', b'', DIR)] + [(f'mini_games/{m}.SC2Map', f'map {m}'.encode() * 50, FILE)
                                                       for m in sc2i.MINI_GAMES])
LADDER_ZIP = make_zip([('Ladder2017Season1/', b'', DIR), ('Ladder2017Season1/AbyssalReefLE.SC2Map', b'reef', FILE)],
                      PASSWORD)

def test_zip_writer_roundtrip():
    "The test's encrypted zips are real ZipCrypto: zipfile needs the password and then reads the data back."
    with zipfile.ZipFile(io.BytesIO(GAME_ZIP)) as zf:
        with pytest.raises(RuntimeError): zf.read('StarCraftII/Libs/x')
        assert zf.read('StarCraftII/Versions/Base75689/SC2_x64', pwd=PASSWORD) == SC2_X64

# %% the local server
class Server:
    """Serves `files` (path -> bytes) over HTTP on 127.0.0.1 with Range support, counting requests. Knobs: `drop_after`
    (path -> bytes sent before the connection is dropped, once), `ignore_range`, `no_length` (close-delimited body),
    `redirects` (path -> URL answered with a 302)."""
    def __init__(self):
        self.files, self.requests, self.drop_after, self.redirects = {}, [], {}, {}
        self.ignore_range, self.no_length = False, False
        server = self
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_GET(self):
                server.requests.append((self.path, self.headers.get('Range')))
                if self.path in server.redirects:
                    self.send_response(302); self.send_header('Location', server.redirects[self.path])
                    self.send_header('Content-Length', '0'); self.end_headers(); return
                data = server.files.get(self.path)
                if data is None: self.send_error(404); return
                start, rng = 0, self.headers.get('Range')
                if rng and not server.ignore_range:
                    start = int(rng.removeprefix('bytes=').split('-')[0])
                    if start >= len(data):
                        self.send_response(416); self.send_header('Content-Range', f'bytes */{len(data)}')
                        self.send_header('Content-Length', '0'); self.end_headers(); return
                    self.send_response(206)
                    self.send_header('Content-Range', f'bytes {start}-{len(data) - 1}/{len(data)}')
                else: self.send_response(200)
                body = data[start:]
                if not server.no_length: self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                cut = server.drop_after.pop(self.path, None)
                self.wfile.write(body if cut is None else body[:cut - start]); self.wfile.flush()
                self.close_connection = True
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = f'http://127.0.0.1:{self.httpd.server_address[1]}'
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
    def close(self): self.httpd.shutdown(); self.httpd.server_close()

@pytest.fixture
def server():
    s = Server()
    s.files.update({'/Linux/SC2.4.10.zip': GAME_ZIP, '/mini_games.zip': MINI_GAMES_ZIP,
                    '/MapPacks/Ladder2017Season1.zip': LADDER_ZIP})
    yield s
    s.close()

@pytest.fixture(autouse=True)
def _no_sc2path(monkeypatch):
    monkeypatch.delenv('SC2PATH', raising=False)

@pytest.fixture(autouse=True)
def _game_digest_unknown(monkeypatch):
    "The test server's game zip is not the real one: unpin 4.10's sha256 (tests that pin their own digest re-pin it)."
    monkeypatch.setitem(sc2i.VERSIONS, '4.10', sc2i.Build(f'{sc2i.CDN_URL}/Linux/SC2.4.10.zip'))

def run(server, target, **kw):
    "install() against the local server (plain http on 127.0.0.1, so allow_http), quietly."
    kw = {'accept_eula': True, 'base_url': server.url, 'maps_url': server.url + '/mini_games.zip', 'progress': False,
          'timeout': 10, 'allow_http': True, **kw}
    return sc2i.install(path=target, **kw)

def leftovers(*folders):
    "Staging folders and partial downloads in `folders` (and their direct children)."
    found = []
    for f in map(Path, folders):
        if f.is_dir(): found += [p.name for p in f.iterdir() if 'reaver-partial' in p.name or p.name.endswith('.part')]
    return found

def assert_installed(target: Path, ladder=False):
    exe = target / 'Versions/Base75689/SC2_x64'
    assert exe.read_bytes() == SC2_X64 and os.access(exe, os.X_OK)
    assert (target / 'Libs/x').read_bytes() == b'lib' * 300 and (target / 'SC2Data/x').is_file()
    assert sorted(p.stem for p in (target / 'Maps/mini_games').glob('*.SC2Map')) == sorted(sc2i.MINI_GAMES)
    assert (target / 'Maps/Ladder2017Season1/AbyssalReefLE.SC2Map').is_file() == ladder
    assert not leftovers(target, target.parent)

# %% tests
@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_install_then_rerun_is_a_noop(server, tmp_path, capsys, extractor):
    target = tmp_path / 'StarCraftII'
    assert run(server, target, extractor=extractor, ladder=['Ladder2017Season1']) == target
    assert_installed(target, ladder=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['StarCraftII']      # archives deleted after the install
    assert f'export SC2PATH={target}' in capsys.readouterr().out             # not the default place: say so
    n = len(server.requests)
    run(server, target, extractor=extractor, ladder=['Ladder2017Season1'], accept_eula=False)
    assert len(server.requests) == n and 'already installed' in capsys.readouterr().out
    # maps removed from an installed game: only the maps are fetched again, the game is left alone
    sc2i.shutil.rmtree(target / 'Maps/mini_games')
    run(server, target, extractor=extractor, ladder=['Ladder2017Season1'])
    assert [p for p, _ in server.requests[n:]] == ['/mini_games.zip']
    assert_installed(target, ladder=True)

def test_resume_after_interrupted_download(server, tmp_path):
    target, downloads = tmp_path / 'StarCraftII', tmp_path / 'dl'
    half = len(GAME_ZIP) // 2
    server.drop_after['/Linux/SC2.4.10.zip'] = half
    with pytest.raises(sc2i.DownloadError, match='re-run to resume') as e:
        run(server, target, download_dir=downloads, keep_archive=True)
    assert 'SC2.4.10.zip' in str(e.value) and not target.exists()
    assert (downloads / 'SC2.4.10.zip.part').stat().st_size == half
    run(server, target, download_dir=downloads, keep_archive=True)
    assert ('/Linux/SC2.4.10.zip', f'bytes={half}-') in server.requests
    assert (downloads / 'SC2.4.10.zip').read_bytes() == GAME_ZIP and not leftovers(downloads)
    assert_installed(target)

@pytest.mark.parametrize('case', ['server_ignores_range', 'part_longer_than_file'])
def test_resume_starts_over_when_it_cannot_continue(server, tmp_path, case):
    "A server answering 200 to a Range request, or 416 (the .part is longer than the file): download from zero."
    target = tmp_path / 'StarCraftII'
    stale = b'stale bytes that are not the archive'
    (tmp_path / 'SC2.4.10.zip.part').write_bytes(stale if case == 'server_ignores_range' else stale * 200)
    server.ignore_range = case == 'server_ignores_range'
    run(server, target, keep_archive=True)
    assert (tmp_path / 'SC2.4.10.zip').read_bytes() == GAME_ZIP
    assert server.requests[0][1] is not None                # it did try to resume
    assert_installed(target)

@pytest.mark.parametrize('bad', ['sha256', 'size_from_server', 'size_of_body'])
def test_checksum_or_size_mismatch(server, tmp_path, monkeypatch, bad):
    target = tmp_path / 'StarCraftII'
    url = f'{sc2i.CDN_URL}/Linux/SC2.4.10.zip'
    build = {'sha256': sc2i.Build(url, sha256='0' * 64), 'size_from_server': sc2i.Build(url, size=len(GAME_ZIP) + 1),
             'size_of_body': sc2i.Build(url, size=len(GAME_ZIP) + 1)}[bad]
    server.no_length = bad == 'size_of_body'            # no Content-Length: the size is only known once downloaded
    monkeypatch.setitem(sc2i.VERSIONS, '4.10', build)
    with pytest.raises(sc2i.ChecksumMismatch) as e: run(server, target)
    msg = str(e.value)
    assert ('sha256' in msg) if bad == 'sha256' else (str(len(GAME_ZIP) + 1) in msg)
    assert ('deleted' in msg and 're-run' in msg) if bad != 'size_from_server' else 'nothing was downloaded' in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == []                # no archive, no .part, no game

def test_no_licence_no_download(server, tmp_path):
    target = tmp_path / 'StarCraftII'
    with pytest.raises(sc2i.LicenseNotAccepted) as e: run(server, target, accept_eula=False)
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert sc2i.EULA_URL in msg and 'accept_eula=True' in msg and '--accept-eula' in msg
    assert server.requests == [] and list(tmp_path.iterdir()) == []

# (the bad member named in the error, the extra members), each added to a good game archive
ABSOLUTE = str(Path(tempfile.gettempdir()) / 'reaver-evil.txt')   # an absolute member name, in a folder every machine has
EVIL = {'dotdot': ('StarCraftII/../../evil.txt', [('StarCraftII/../../evil.txt', b'pwned', FILE)]),
        'absolute': (ABSOLUTE, [(ABSOLUTE, b'x', FILE)]),
        'link-up': ('StarCraftII/Libs/up', [('StarCraftII/Libs/up', b'../../..', LINK)]),
        'link-abs': ('StarCraftII/Libs/abs', [('StarCraftII/Libs/abs', b'/etc', LINK)]),
        # a link that stays inside, then a member written through it (the link's destination could be anything)
        'through-link': ('StarCraftII/Libs/l/evil.txt', [('StarCraftII/Libs/l', b'../..', LINK),
                                                          ('StarCraftII/Libs/l/evil.txt', b'pwned', FILE)])}

@pytest.mark.parametrize('evil', EVIL)
def test_member_outside_target_refused(server, tmp_path, evil):
    "Checked from the listing right after the download: the whole archive is refused (and deleted), nothing unpacked."
    root = tmp_path / 'home'; root.mkdir()
    target = root / 'StarCraftII'
    bad, extra = EVIL[evil]
    server.files['/Linux/SC2.4.10.zip'] = make_zip(game_entries(extra), PASSWORD)
    with pytest.raises(sc2i.UnsafeArchive) as e: run(server, target)
    assert repr(bad) in str(e.value) and 'nothing was extracted' in str(e.value) and 'deleted' in str(e.value)
    assert list(root.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ['home']
    assert [p for p, _ in server.requests] == ['/Linux/SC2.4.10.zip']    # failed fast: no maps downloaded
    assert not Path(ABSOLUTE).exists()

@pytest.mark.parametrize('extractor', EXTRACTORS)
@pytest.mark.parametrize('evil', ['dotdot', 'link-up', 'through-link'])
def test_extract_refuses_before_writing(tmp_path, evil, extractor):
    "extract() itself checks the listing before either extractor writes anything."
    archive = tmp_path / 'a' / 'game.zip'; archive.parent.mkdir()
    archive.write_bytes(make_zip(game_entries(EVIL[evil][1]), PASSWORD))
    dest = tmp_path / 'a' / 'b' / 'out'
    with pytest.raises(sc2i.UnsafeArchive): sc2i.extract(archive, dest, PASSWORD.decode(), extractor)
    assert not dest.exists() and sorted(p.name for p in tmp_path.rglob('*')) == ['a', 'game.zip']

def test_nested_top_folder_and_ladder_without_maps(server, tmp_path):
    "Older zips nest the game one level deeper (SC2.4.9.2/StarCraftII/); a 'map pack' without maps is refused."
    target = tmp_path / 'StarCraftII'
    server.files['/Linux/SC2.4.10.zip'] = make_zip([('SC2.4.9.2/' + n, d, m) for n, d, m in game_entries()], PASSWORD)
    server.files['/MapPacks/Empty.zip'] = make_zip([('Empty/readme.txt', b'no maps', FILE)], PASSWORD)
    with pytest.raises(sc2i.InstallError, match='holds no .SC2Map files'): run(server, target, ladder=['Empty'])
    assert not target.exists() and not leftovers(tmp_path)
    run(server, target, keep_archive=True)
    assert_installed(target)

def test_inside_symlink_allowed(server, tmp_path):
    "A symlink that stays inside the install (like a library alias) is unpacked fine."
    target = tmp_path / 'StarCraftII'
    server.files['/Linux/SC2.4.10.zip'] = make_zip(game_entries([('StarCraftII/Libs/y', b'x', LINK)]), PASSWORD)
    run(server, target, extractor='python')
    assert os.readlink(target / 'Libs/y') == 'x' and (target / 'Libs/y').read_bytes() == b'lib' * 300
    assert_installed(target)

def test_too_little_disk(server, tmp_path, monkeypatch):
    target = tmp_path / 'StarCraftII'
    monkeypatch.setattr(sc2i.shutil, 'disk_usage', lambda p: types.SimpleNamespace(free=1000))
    with pytest.raises(sc2i.NotEnoughDiskSpace) as e: run(server, target)
    msg = str(e.value)
    assert '1.0 KB is free' in msg and 'download' in msg and 'unpacked' in msg and 'SC2PATH' in msg, msg
    assert list(tmp_path.iterdir()) == []                                  # nothing written
    with pytest.raises(sc2i.NotEnoughDiskSpace, match='min_free_gb=5'): run(server, target, min_free_gb=5)
    run(server, target, min_free_gb=0)                                     # 0: no check
    assert_installed(target)

def test_sc2path_respected(server, tmp_path, monkeypatch, capsys):
    target = tmp_path / 'games' / 'sc2'
    monkeypatch.setenv('SC2PATH', str(target))
    assert sc2i.sc2_path() == target
    assert run(server, None) == target
    assert_installed(target)
    assert 'export SC2PATH' not in capsys.readouterr().out                 # it already points there
    monkeypatch.delenv('SC2PATH'); monkeypatch.setenv('HOME', str(tmp_path))
    assert sc2i.sc2_path() == tmp_path / 'StarCraftII'

def test_existing_folder_without_game_refused(server, tmp_path):
    target = tmp_path / 'StarCraftII'
    (target / 'Maps').mkdir(parents=True); (target / 'Maps/mine.SC2Map').write_bytes(b'mine')
    with pytest.raises(sc2i.InstallError, match='holds no StarCraft II build'): run(server, target)
    assert server.requests == [] and [p.name for p in target.rglob('*')] == ['Maps', 'mine.SC2Map']

def test_empty_existing_folder_is_filled(server, tmp_path):
    "An empty target (say a mount point) is installed into in place."
    target = tmp_path / 'StarCraftII'; target.mkdir()
    run(server, target)
    assert_installed(target)

def test_http_error_is_clear(server, tmp_path):
    with pytest.raises(sc2i.DownloadError, match=r'HTTP 404 .* from http://127\.0\.0\.1:\d+/Linux/SC2\.4\.7\.1\.zip'):
        run(server, tmp_path / 'StarCraftII', version='4.7.1')
    assert list(tmp_path.iterdir()) == []

def test_cli_one_line_errors(server, tmp_path, capsys):
    target = tmp_path / 'StarCraftII'
    base = ['--path', str(target), '--base-url', server.url, '--maps-url', server.url + '/mini_games.zip',
            '--no-progress', '--allow-http']
    for argv, needle in [(base, sc2i.EULA_URL), (base + ['--bogus'], 'unrecognized arguments: --bogus'),
                         (base + ['--min-free-gb', 'lots'], "invalid float value: 'lots'"),
                         (base + ['--accept-eula', '--version', 'latest'], "'latest' is not a version number"),
                         (base + ['--accept-eula', '--ladder', '../x'], 'not a pack name'),
                         (base + ['--accept-eula', '--min-free-gb', '1e9'], 'not enough free disk space')]:
        assert sc2i.cli(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith('reaver sc2 install: error: ') and err.count('\n') == 1 and needle in err, err
    assert not target.exists() and not leftovers(tmp_path)
    assert sc2i.cli(base + ['--accept-eula']) == 0
    assert_installed(target)

def test_module_help_runs():
    r = subprocess.run([sys.executable, '-m', 'reaver_nb.sc2.installer', '--help'], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and '--accept-eula' in r.stdout
    assert sc2i.EULA_URL in r.stdout.replace('\n', '').replace(' ', '')

# %% crafted zips: names and file types that zipfile and unzip would read differently, and other unsafe members
def unicode_path(header_name: bytes, new: str) -> bytes:
    "An Info-ZIP Unicode Path extra field (0x7075): version 1, the CRC-32 of the header's name, the name unzip uses."
    data = struct.pack('<BI', 1, zlib.crc32(header_name)) + new.encode()
    return struct.pack('<HH', 0x7075, len(data)) + data

def asi_unix(mode: int, link: bytes = b'') -> bytes:
    "An ASi Unix extra field (0x756e): CRC, mode, link size, uid, gid, link; unzip takes the mode from it when the "
    "external attributes hold none."
    body = struct.pack('<HIHH', mode, len(link), 0, 0) + link
    data = struct.pack('<I', zlib.crc32(body)) + body
    return struct.pack('<HH', 0x756E, len(data)) + data

RENAMED = 'StarCraftII/Libs/deep/ok'    # a symlink to ../../.. : inside where zipfile puts it, outside as 'esc'
# name -> (the member the error must name, entries added to a good game archive)
ATTACKS = {
    'unicode-path-renames-a-link': (RENAMED, [(RENAMED, b'../../..', LINK,
                                               {'extra': unicode_path(RENAMED.encode(), 'esc')})]),
    'unicode-path-local-header-only': ('StarCraftII/Libs/u', [('StarCraftII/Libs/u', b'../../..', LINK, {
        'local_extra': unicode_path(b'StarCraftII/Libs/u', 'esc')})]),
    'unicode-path-same-name-bad-utf8': ('StarCraftII/Libs/v', [('StarCraftII/Libs/v', b'x', FILE, {
        'extra': struct.pack('<HHBI', 0x7075, 7, 1, 0) + b'\xff\xfe'})]),
    'local-name-differs': ('StarCraftII/Libs/m', [('StarCraftII/Libs/m', b'x', FILE,
                                                    {'local_name': b'../../evil.txt!'})]),
    'asi-field-makes-a-link': ('StarCraftII/Libs/asi', [('StarCraftII/Libs/asi', b'/etc', FILE, {
        'attr': 0, 'extra': asi_unix(stat.S_IFLNK | 0o777)})]),
    'link-made-on-beos': ('StarCraftII/Libs/beos', [('StarCraftII/Libs/beos', b'/etc', LINK, {'host': 16})]),
    'backslashes': ('StarCraftII\\..\\..\\evil.txt', [('StarCraftII\\..\\..\\evil.txt', b'x', FILE, {'host': 0})]),
    'nul-in-name': ('StarCraftII/ok\x00/../../evil.txt', [('StarCraftII/ok\x00/../../evil.txt', b'x', FILE)]),
    'control-char': ('StarCraftII/a\nb', [('StarCraftII/a\nb', b'x', FILE)]),
    'dot-component': ('StarCraftII/./Libs/z', [('StarCraftII/./Libs/z', b'x', FILE)]),
    'empty-component': ('StarCraftII//Libs/z', [('StarCraftII//Libs/z', b'x', FILE)]),
    'drive-letter': ('C:/evil.txt', [('C:/evil.txt', b'x', FILE)]),
    'duplicate': ('StarCraftII/Libs/x', [('StarCraftII/Libs/x', b'again', FILE)]),
    'file-and-folder': ('StarCraftII/Libs/x/', [('StarCraftII/Libs/x/', b'', DIR)]),
    'under-a-file': ('StarCraftII/Libs/x/inner', [('StarCraftII/Libs/x/inner', b'x', FILE)]),
    # l2 -> .. stays inside; l1 -> l2/../../.. is inside read as text, but the kernel resolves l2 first: outside
    'link-chain': ('StarCraftII/Libs/l1', [('StarCraftII/Libs/l2', b'..', LINK),
                                           ('StarCraftII/Libs/l1', b'l2/../../..', LINK)]),
    'link-to-link-outside': ('StarCraftII/Libs/b', [('StarCraftII/Libs/a', b'b', LINK),
                                                    ('StarCraftII/Libs/b', b'../../../..', LINK)]),
    'nul-in-link': ('StarCraftII/Libs/n', [('StarCraftII/Libs/n', b'x\x00/../../../..', LINK)]),
    'bzip2-member': ('StarCraftII/Libs/bz', [('StarCraftII/Libs/bz', b'x', FILE, {'method': 12})]),
    'long-link': ('StarCraftII/Libs/long', [('StarCraftII/Libs/long', b'a/' * 2100, LINK)]),
    # a link declaring 1 byte (with that byte's CRC) that holds 10 KB more: its destination is read as declared
    'link-larger-than-declared': ('StarCraftII/Libs/lie', [('StarCraftII/Libs/lie', b'x' + b'/' * 10_000, LINK,
                                                            {'size': 1, 'crc': zlib.crc32(b'x')})]),
}

def everything(folder: Path) -> set[str]:
    "Every path under `folder` (symlinks not followed), relative."
    return {p.relative_to(folder).as_posix() for p in folder.rglob('*')}

def names_and_folders(entries) -> set[str]:
    "The entries' names and every folder above them."
    out = set()
    for name, *_ in entries:
        parts = name.rstrip('/').split('/')
        out |= {'/'.join(parts[:k]) for k in range(1, len(parts) + 1)}
    return out

@pytest.mark.parametrize('attack', ATTACKS)
def test_crafted_member_refused_by_install(server, tmp_path, attack):
    "Refused from the listing right after the download, with a one-line error naming the member; the zip is deleted."
    root = tmp_path / 'home'; root.mkdir()
    bad, extra = ATTACKS[attack]
    server.files['/Linux/SC2.4.10.zip'] = make_zip(game_entries(extra), PASSWORD)
    with pytest.raises(sc2i.UnsafeArchive) as e: run(server, root / 'StarCraftII')
    msg = str(e.value)
    assert repr(bad) in msg and 'nothing was extracted' in msg and 'deleted' in msg and '\n' not in msg, msg
    assert everything(tmp_path) == {'home'}
    assert [p for p, _ in server.requests] == ['/Linux/SC2.4.10.zip']

@pytest.mark.parametrize('extractor', EXTRACTORS)
@pytest.mark.parametrize('attack', ATTACKS)
def test_crafted_member_refused_by_extract(tmp_path, attack, extractor):
    "extract() with either extractor: nothing is written, inside the destination or outside it."
    box = tmp_path / 'box'; (box / 'a').mkdir(parents=True)
    archive = box / 'game.zip'
    archive.write_bytes(make_zip(game_entries(ATTACKS[attack][1]), PASSWORD))
    with pytest.raises(sc2i.UnsafeArchive, match='nothing was extracted'):
        sc2i.extract(archive, box / 'a' / 'b' / 'out', PASSWORD.decode(), extractor)
    assert everything(tmp_path) == {'box', 'box/a', 'box/game.zip'}

@pytest.mark.skipif(not HAS_UNZIP, reason='no unzip program')
def test_the_unicode_path_attack_is_real(tmp_path):
    "Without the checks, unzip does unpack the member as 'esc', a symlink out of the folder (zipfile sees it inside)."
    archive = tmp_path / 'z.zip'
    archive.write_bytes(make_zip(ATTACKS['unicode-path-renames-a-link'][1]))
    with zipfile.ZipFile(archive) as zf: assert zf.namelist() == [RENAMED]
    out = tmp_path / 'x' / 'y' / 'out'; out.mkdir(parents=True)
    subprocess.run(['unzip', '-q', '-o', str(archive), '-d', str(out)], check=True, capture_output=True)
    assert os.readlink(out / 'esc') == '../../..'
    assert (out / 'esc').resolve() == tmp_path                          # three levels above the folder unpacked into
    archive.write_bytes(make_zip(ATTACKS['asi-field-makes-a-link'][1]))
    with zipfile.ZipFile(archive) as zf: assert zf.infolist()[0].external_attr == 0      # zipfile: a plain file
    subprocess.run(['unzip', '-q', '-o', str(archive), '-d', str(out)], check=True, capture_output=True)
    assert os.readlink(out / 'StarCraftII/Libs/asi') == '/etc'                          # unzip: a symlink to /etc

@pytest.mark.skipif(not HAS_UNZIP, reason='no unzip program')
def test_unzip_only_gives_bytes(tmp_path, monkeypatch):
    "Defence in depth, with the name checks switched off: unzip reads the member as 'esc', but it only supplies the "
    "bytes; Python writes them under the name (and as the link) the checks accepted, so no 'esc' appears."
    archive = tmp_path / 'game.zip'
    archive.write_bytes(make_zip(game_entries(ATTACKS['unicode-path-renames-a-link'][1]), PASSWORD))
    monkeypatch.setattr(sc2i, '_refusal', lambda info, local: None)
    dest = tmp_path / 'out'
    sc2i.extract(archive, dest, PASSWORD.decode(), 'unzip')
    assert not os.path.lexists(dest / 'esc') and os.readlink(dest / RENAMED) == '../../..'
    assert everything(dest) == names_and_folders(game_entries()) | {'StarCraftII/Libs/deep', RENAMED}

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_what_was_written_is_audited(tmp_path, monkeypatch, extractor):
    "Defence in depth: should anything but the listing's members appear in the folder while unpacking, the archive is "
    "refused and what was written removed."
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries(), PASSWORD))
    put = sc2i._Writer.put
    def put_and_stray(self, m, data):
        put(self, m, data)
        if not os.path.lexists(os.path.join(self.dest, 'esc')): os.symlink('/etc', os.path.join(self.dest, 'esc'))
    monkeypatch.setattr(sc2i._Writer, 'put', put_and_stray)
    with pytest.raises(sc2i.UnsafeArchive, match="wrote 'esc', which is not in the listing"):
        sc2i.extract(archive, tmp_path / 'out', PASSWORD.decode(), extractor)
    assert everything(tmp_path) == {'game.zip'}

def test_link_out_of_a_nested_game_folder_refused(server, tmp_path):
    "In SC2.4.9.2/StarCraftII/, a symlink to ../x is inside the zip but outside the install once moved into place."
    target = tmp_path / 'StarCraftII'
    entries = [('SC2.4.9.2/' + n, d, m) for n, d, m in game_entries()]
    server.files['/Linux/SC2.4.10.zip'] = make_zip(entries + [('SC2.4.9.2/StarCraftII/Maps/up', b'../../x', LINK)],
                                                   PASSWORD)
    with pytest.raises(sc2i.UnsafeArchive, match="'SC2.4.9.2/StarCraftII/Maps/up' is a symlink to '../../x'"):
        run(server, target)
    assert everything(tmp_path) == set()

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_link_leaving_the_install_caught_after_unpacking(tmp_path, extractor, monkeypatch):
    "Should a link out of the game folder pass the listing checks, it is caught on disk before anything moves."
    staging = tmp_path / 'staging'; staging.mkdir()
    archive = tmp_path / 'game.zip'
    archive.write_bytes(make_zip([('SC2/' + n, d, m) for n, d, m in game_entries()] +
                                 [('SC2/StarCraftII/Maps/up', b'../../x', LINK)], PASSWORD))
    sc2i.extract(archive, staging, PASSWORD.decode(), extractor)      # inside the zip's folder: accepted here
    assert sc2i._links_leaving(staging / 'SC2' / 'StarCraftII') == ["'Maps/up' -> '../../x'"]
    assert sc2i._links_leaving(staging) == []

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_existing_symlink_in_destination_refused(tmp_path, extractor):
    dest = tmp_path / 'out'; (dest / 'StarCraftII').mkdir(parents=True)
    (tmp_path / 'elsewhere').mkdir()
    os.symlink(tmp_path / 'elsewhere', dest / 'StarCraftII' / 'Libs')
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries(), PASSWORD))
    with pytest.raises(sc2i.UnsafeArchive, match="'StarCraftII/Libs' is already a symlink"):
        sc2i.extract(archive, dest, PASSWORD.decode(), extractor)
    assert list((tmp_path / 'elsewhere').iterdir()) == []

ODD_NAMES = [('StarCraftII/Maps/[x]*?.SC2Map', b'brackets', FILE), ('StarCraftII/Maps/x.SC2Map', b'plain x', FILE),
             ('StarCraftII/-d', b'dash', FILE), ('StarCraftII/-x', b'dash x', FILE)]

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_wildcards_and_dashes_in_names(tmp_path, extractor):
    "Names with wildcards or a leading '-' are written as they are (unzip is given no names, only the archive)."
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries(ODD_NAMES), PASSWORD))
    dest = tmp_path / 'out'
    sc2i.extract(archive, dest, PASSWORD.decode(), extractor)
    names = set()
    for name, data, _ in game_entries(ODD_NAMES):
        if not name.endswith('/'): assert (dest / name).read_bytes() == data, name
        parts = name.rstrip('/').split('/')
        names |= {'/'.join(parts[:k]) for k in range(1, len(parts) + 1)}
    assert everything(dest) == names

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_non_ascii_names_kept(tmp_path, extractor):
    "Names unzip might spell otherwise (not ASCII) are written under the checked names: unzip only gives the bytes."
    archive = tmp_path / 'maps.zip'
    archive.write_bytes(make_zip([('Ladder/', b'', DIR), ('Ladder/Café.SC2Map', b'cafe', FILE),
                                  ('Ladder/plain.SC2Map', b'p', FILE), ('Ladder/ç', 'Café.SC2Map'.encode(), LINK)]))
    sc2i.extract(archive, tmp_path / 'out', None, extractor)
    assert (tmp_path / 'out/Ladder/Café.SC2Map').read_bytes() == b'cafe'
    assert (tmp_path / 'out/Ladder/plain.SC2Map').read_bytes() == b'p'
    assert os.readlink(tmp_path / 'out/Ladder/ç') == 'Café.SC2Map'
    assert everything(tmp_path / 'out') == {'Ladder', 'Ladder/Café.SC2Map', 'Ladder/plain.SC2Map', 'Ladder/ç'}

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_no_world_writable_files(tmp_path, extractor):
    "unzip restores modes as stored (0777 included); both extractors take write permission from group and others."
    archive = tmp_path / 'a.zip'
    archive.write_bytes(make_zip([('d/', b'', stat.S_IFDIR | 0o777), ('d/f', b'x', stat.S_IFREG | 0o777)]))
    sc2i.extract(archive, tmp_path / 'out', None, extractor)
    for p in ('d', 'd/f'): assert stat.S_IMODE((tmp_path / 'out' / p).stat().st_mode) & 0o022 == 0, p
    assert os.access(tmp_path / 'out/d/f', os.X_OK)

# %% declared sizes: no member gets more bytes than the listing declares (the sizes the free-space check counts)
def written_here() -> int | None:
    "Bytes this thread has written so far (files, pipes, the terminal; not unzip's), from /proc; None without /proc."
    try: return int(re.search(r'^wchar: (\d+)$', Path('/proc/thread-self/io').read_text(), re.M)[1])
    except (OSError, TypeError): return None

LIAR = 'StarCraftII/Versions/Base75689/SC2_x64'
BIG = {'stored': 256 << 10, 'deflated': 32 << 20}   # behind a declared 1,000 bytes (stored: encrypted in pure Python)

@functools.lru_cache(maxsize=None)
def lying_zip(method: str, crc_of: str, password: bytes | None = PASSWORD) -> bytes:
    """A game zip whose SC2_x64 declares 1,000 bytes but holds BIG[method], with the CRC-32 of all of them ('all': what
    unzip checks, so unzip alone unpacks it without a word) or of the first 1,000 ('prefix': what a reader that stops at
    the declared size checks)."""
    data = bytes(range(256)) * (BIG[method] // 256)
    o = {'size': 1000, 'crc': zlib.crc32(data if crc_of == 'all' else data[:1000]), 'method': 8 if method == 'deflated'
         else 0}
    return make_zip([e for e in game_entries() if e[0] != LIAR] + [(LIAR, data, EXE, o)], password)

def declared(archive: Path) -> int:
    with zipfile.ZipFile(archive) as zf: return sum(i.file_size for i in zf.infolist())

@pytest.mark.parametrize('extractor', EXTRACTORS)
@pytest.mark.parametrize('method', ['stored', 'deflated'])
@pytest.mark.parametrize('crc_of', ['all', 'prefix'])
def test_member_larger_than_declared_refused(tmp_path, extractor, method, crc_of):
    "A ZipCrypto member declaring 1,000 bytes that holds 256 KiB (stored) or 32 MiB (deflated): refused in one line, "
    "nothing left, and no more written meanwhile than the listing declares (what the free-space check counted)."
    archive = tmp_path / 'game.zip'; archive.write_bytes(lying_zip(method, crc_of))
    tempfile.gettempdir()       # its first call in a process writes a 4-byte probe file: not the extraction's doing
    start = written_here()
    with pytest.raises(sc2i.UnsafeArchive) as e: sc2i.extract(archive, tmp_path / 'a' / 'out', PASSWORD.decode(),
                                                              extractor)
    wrote = None if start is None else written_here() - start
    msg = str(e.value)
    assert msg.startswith('refusing game.zip: ') and msg.endswith('what was written was removed') and '\n' not in msg
    assert (repr(LIAR) in msg) if (extractor, crc_of) != ('unzip', 'prefix') else \
        'unzip gives more data than the' in msg     # the 1,000 bytes unzip gives for it pass; the extra ones do not
    assert everything(tmp_path) == {'game.zip'}
    if wrote is not None: assert wrote <= declared(archive) < 4000, wrote

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_install_refuses_member_larger_than_declared(server, tmp_path, extractor):
    "Through install(): the game zip passes the download checks (its listing is fine), unpacking refuses it, nothing "
    "is installed or left behind."
    target = tmp_path / 'StarCraftII'
    server.files['/Linux/SC2.4.10.zip'] = lying_zip('deflated', 'all')
    with pytest.raises(sc2i.UnsafeArchive, match=f"{LIAR!r}|more data than"):
        run(server, target, extractor=extractor, keep_archive=True, maps=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['SC2.4.10.zip'] and not leftovers(tmp_path)

@pytest.mark.skipif(not HAS_UNZIP, reason='no unzip program')
def test_the_size_lie_is_real(tmp_path):
    "Without the checks, unzip unpacks all 256 KiB of the member declaring 1,000 bytes (exit code 1, 'warnings only', "
    "which the installer used to accept; 0 when deflated), and zipfile returns its first 1,000 without saying that "
    "more follows."
    archive = tmp_path / 'game.zip'; archive.write_bytes(lying_zip('stored', 'all'))
    r = subprocess.run(['unzip', '-q', '-P', PASSWORD.decode(), str(archive), '-d', str(tmp_path / 'out')],
                       capture_output=True, text=True)
    assert r.returncode == 1 and 'ucsize 1000 <> csize 262144' in r.stdout + r.stderr, r
    assert (tmp_path / 'out' / LIAR).stat().st_size == BIG['stored']
    with zipfile.ZipFile(io.BytesIO(lying_zip('stored', 'prefix'))) as zf:
        assert len(zf.read(LIAR, pwd=PASSWORD)) == 1000

@pytest.mark.parametrize('extractor', EXTRACTORS)
@pytest.mark.parametrize('method', ['stored', 'deflated'])
def test_member_smaller_than_declared_refused(tmp_path, extractor, method):
    "A member holding 3,000 bytes that declares 5,000 (CRC of what it holds): refused too, in one line, nothing left."
    short = ('StarCraftII/Libs/short', b's' * 3000, FILE, {'size': 5000, 'method': 8 if method == 'deflated' else 0})
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries([short]), PASSWORD))
    with pytest.raises(sc2i.InstallError) as e: sc2i.extract(archive, tmp_path / 'out', PASSWORD.decode(), extractor)
    msg = str(e.value)
    assert '\n' not in msg and ("'StarCraftII/Libs/short' holds 3000 bytes, fewer than the 5000" in msg
                                if extractor == 'python' else 'unzip' in msg), msg
    assert everything(tmp_path) == {'game.zip'}

@pytest.mark.parametrize('extractor', EXTRACTORS)
@pytest.mark.parametrize('password', [PASSWORD, None])
def test_crc_mismatch_refused(tmp_path, extractor, password):
    "A member whose data does not have the declared CRC-32 (its size is right): refused, nothing left."
    data = b'damaged' * 100
    bad = ('StarCraftII/Libs/bad', data, FILE, {'crc': zlib.crc32(data) ^ 1})     # same high byte: the password checks
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries([bad]), password))
    with pytest.raises(sc2i.UnsafeArchive) as e:
        sc2i.extract(archive, tmp_path / 'out', password and password.decode(), extractor)
    msg = str(e.value)
    assert "'StarCraftII/Libs/bad'" in msg and 'CRC-32' in msg and '\n' not in msg, msg
    assert everything(tmp_path) == {'game.zip'}

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_encrypted_without_password_refused(tmp_path, extractor):
    "No password for an encrypted archive: one line before anything is written (unzip would ask on the terminal)."
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries(), PASSWORD))
    with pytest.raises(sc2i.InstallError, match="is encrypted and no password was given"):
        sc2i.extract(archive, tmp_path / 'out', None, extractor)
    assert everything(tmp_path) == {'game.zip'}

MANY = [('StarCraftII/', b'', DIR)] + [(f'StarCraftII/d{k // 100}/f{k}', b'%d.' % k * 3, FILE) for k in range(3000)]

@functools.lru_cache(maxsize=None)
def many_zip() -> bytes: return make_zip(MANY, PASSWORD)

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_wrong_password_refused(tmp_path, extractor):
    "A wrong password: one line (unzip's exit code 82, or zipfile's 'Bad password'), nothing left."
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries(), PASSWORD))
    with pytest.raises(sc2i.InstallError) as e: sc2i.extract(archive, tmp_path / 'out', 'not the password', extractor)
    assert '\n' not in str(e.value) and 'game.zip' in str(e.value), e.value
    assert everything(tmp_path) == {'game.zip'}

@pytest.mark.parametrize('extractor', EXTRACTORS)
def test_many_members(tmp_path, extractor):
    "3,000 members in 30 folders, encrypted (60,000 took unzip minutes when it was given their names): each file has "
    "its own bytes, nothing else is written."
    entries = MANY
    archive = tmp_path / 'many.zip'; archive.write_bytes(many_zip())
    dest = tmp_path / 'out'
    sc2i.extract(archive, dest, PASSWORD.decode(), extractor)
    assert everything(dest) == names_and_folders(entries)
    for name, data, _ in entries[1:]: assert (dest / name).read_bytes() == data, name

FAKE_UNZIP = '''import sys, zipfile
"A stand-in for `unzip -p [-P PASSWORD] ARCHIVE` made with zipfile, whose output is off in one way: MODE."
mode, args = sys.argv[1], sys.argv[2:]
assert args[0] == '-p', args
pwd = args[2].encode() if args[1] == '-P' else None
if mode == 'wrong-password': sys.exit(82)            # what unzip does: no output, exit code 82
with zipfile.ZipFile(args[-1]) as zf:
    infos = zf.infolist()[::-1] if mode == 'reversed' else zf.infolist()
    out = b''.join(zf.read(i, pwd=pwd) for i in infos)
sys.stdout.buffer.write(out[:-1] if mode == 'short' else out + b'x' if mode == 'extra' else out)
'''

@pytest.mark.parametrize('mode', ['as-is', 'reversed', 'short', 'extra', 'wrong-password'])
def test_unzip_output_checked_against_listing(tmp_path, monkeypatch, mode):
    "unzip's output is used only as far as it matches the listing, member by member: members in another order, a "
    "byte missing or one too many, or unzip's own error refuse the archive in one line, and nothing is left. (A fake "
    "unzip on PATH, so this runs without the program too.)"
    bin_ = tmp_path / 'bin'; bin_.mkdir()
    (bin_ / 'fake_unzip.py').write_text(FAKE_UNZIP)
    (bin_ / 'unzip').write_text(f'#!/bin/sh\nexec "{sys.executable}" "{bin_ / "fake_unzip.py"}" {mode} "$@"\n')
    (bin_ / 'unzip').chmod(0o755)
    monkeypatch.setenv('PATH', f'{bin_}{os.pathsep}{os.environ.get("PATH", "")}')
    archive = tmp_path / 'game.zip'; archive.write_bytes(make_zip(game_entries(), PASSWORD))
    dest = tmp_path / 'out'
    if mode == 'as-is':                                  # the fake itself is right
        sc2i.extract(archive, dest, PASSWORD.decode(), 'unzip')
        assert (dest / LIAR).read_bytes() == SC2_X64 and everything(dest) == names_and_folders(game_entries())
        return
    with pytest.raises(sc2i.InstallError) as e: sc2i.extract(archive, dest, PASSWORD.decode(), 'unzip')
    msg = str(e.value)
    assert {'reversed': f"the {len(SC2_X64)} bytes unzip gives for {LIAR!r} do not have the CRC-32",
            'short': "unzip's output ends 3 bytes into 'StarCraftII/Battle.net/x'",
            'extra': f'unzip gives more data than the {declared(archive)} bytes the listing declares',
            'wrong-password': 'exit code 82: wrong password'}[mode] in msg and '\n' not in msg, msg
    assert everything(tmp_path) == {'bin', 'bin/unzip', 'bin/fake_unzip.py', 'game.zip'}

# %% https only
@pytest.mark.parametrize('where', ['base_url', 'maps_url'])
def test_plain_http_refused(server, tmp_path, where):
    "Plain http (the local server) without allow_http: one line naming https, before anything is downloaded."
    with pytest.raises(sc2i.InstallError) as e: run(server, tmp_path / 'StarCraftII', allow_http=False)
    msg = str(e.value)
    assert 'https://' in msg and server.url in msg and '\n' not in msg
    kw = {'base_url': 'https://mirror.example', where: 'http://mirror.example/x.zip'}
    if where == 'base_url': kw['base_url'] = 'http://mirror.example'
    with pytest.raises(sc2i.InstallError, match='only https:// URLs'): run(server, tmp_path / 'StarCraftII', **kw)
    assert server.requests == [] and list(tmp_path.iterdir()) == []

def test_allow_http_is_only_for_this_machine(server, tmp_path):
    for url in ('http://mirror.example', 'ftp://127.0.0.1', 'file:///etc'):
        with pytest.raises(sc2i.InstallError, match='only https') as e:
            run(server, tmp_path / 'StarCraftII', base_url=url)
        assert ('--allow-http' in str(e.value)) == url.startswith('http:')
    with pytest.raises(sc2i.InstallError, match='only https'):
        sc2i.download('http://mirror.example/x.zip', tmp_path / 'x.zip', allow_http=True)
    assert server.requests == [] and list(tmp_path.iterdir()) == []

def test_cli_refuses_http(server, tmp_path, capsys):
    assert sc2i.cli(['--accept-eula', '--path', str(tmp_path / 'sc2'), '--base-url', 'http://mirror.example']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'only https://' in err and '--base-url' in err

def test_redirect_to_plain_http_refused(server, tmp_path):
    server.redirects['/Linux/SC2.4.10.zip'] = 'http://mirror.example/SC2.4.10.zip'
    with pytest.raises(sc2i.DownloadError, match="to 'http://mirror.example/SC2.4.10.zip', which is not https"):
        run(server, tmp_path / 'StarCraftII')
    assert list(tmp_path.iterdir()) == []
    server.redirects['/Linux/SC2.4.10.zip'] = server.url + '/moved/SC2.4.10.zip'    # this machine, with allow_http
    server.files['/moved/SC2.4.10.zip'] = GAME_ZIP
    run(server, tmp_path / 'StarCraftII')
    assert_installed(tmp_path / 'StarCraftII')

def test_redirect_handler_keeps_https():
    follow = sc2i._HttpsRedirects(allow_http=False)
    req = urllib.request.Request('https://blzdistsc2-a.akamaihd.net/Linux/SC2.4.10.zip')
    for bad in ('http://127.0.0.1/SC2.4.10.zip', 'http://mirror.example/x', 'ftp://mirror.example/x'):
        with pytest.raises(sc2i.DownloadError, match='not https'):
            follow.redirect_request(req, None, 302, 'Found', {}, bad)
    assert follow.redirect_request(req, None, 302, 'Found', {}, 'https://mirror.example/x').full_url == \
        'https://mirror.example/x'

# %% digests
def sha(b: bytes) -> str: return hashlib.sha256(b).hexdigest()

def pin_game(monkeypatch):
    "Pin 4.10's sha256 to the test server's game zip."
    monkeypatch.setitem(sc2i.VERSIONS, '4.10', sc2i.Build(f'{sc2i.CDN_URL}/Linux/SC2.4.10.zip', sha256=sha(GAME_ZIP)))

def test_published_digests_are_pinned():
    assert sc2i.VERSIONS['4.10'].sha256 is None                          # (unpinned by this file's fixture)
    assert sc2i.SHA256['4.10'] == '1052f249f30a242bf5e17cc3315324919f9689307ca6dbcdb30bb41ea3004884'
    assert sc2i.SHA256['4.7.1'] == 'adcdb041327c64000dd55cc4aec5141416a00f76fe14b821f1a8b6d156f23960'
    assert sc2i.SHA256['3.17'] == '600b5761e39656009a28daf4cc9736327f98438260f01b2255b0247bdced3eae'
    assert sc2i.game_archive('4.7.1').sha256 == sc2i.SHA256['4.7.1'] and sc2i.game_archive('4.9.3').sha256 is None
    assert sc2i.mini_games_archive().sha256 is None

def record(target: Path) -> dict:
    return json.loads((target / sc2i.INSTALL_RECORD).read_text())['archives']

def test_digests_recorded_and_a_changed_file_refused(server, tmp_path, monkeypatch):
    target = tmp_path / 'StarCraftII'
    pin_game(monkeypatch)
    run(server, target)
    rec = record(target)
    assert rec['SC2.4.10.zip']['sha256'] == sha(GAME_ZIP) and rec['SC2.4.10.zip']['sha256_pinned'] is True
    assert rec['mini_games.zip']['sha256'] == sha(MINI_GAMES_ZIP) and rec['mini_games.zip']['sha256_pinned'] is False
    # the maps are removed and the server's mini_games.zip has changed since: refused, the recorded digest says so
    shutil.rmtree(target / 'Maps/mini_games')
    server.files['/mini_games.zip'] = make_zip([(f'mini_games/{m}.SC2Map', b'other', FILE) for m in sc2i.MINI_GAMES])
    with pytest.raises(sc2i.ChecksumMismatch) as e: run(server, target)
    msg = str(e.value)
    assert sha(MINI_GAMES_ZIP) in msg and str(target / sc2i.INSTALL_RECORD) in msg and 'changed' in msg, msg
    assert not (target / 'Maps/mini_games').exists() and not leftovers(tmp_path) and '\n' not in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ['StarCraftII']
    server.files['/mini_games.zip'] = MINI_GAMES_ZIP                   # the same file again: fine
    run(server, target)
    assert_installed(target)

# %% files already on disk are verified, not trusted
def test_existing_download_verified(server, tmp_path, capsys):
    target = tmp_path / 'StarCraftII'
    for stale in (b'not a zip at all', LADDER_ZIP, make_zip(game_entries([('StarCraftII/../x', b'', FILE)]))):
        (tmp_path / 'SC2.4.10.zip').write_bytes(stale)
        run(server, target, keep_archive=True, maps=False)
        assert 'Not using the already downloaded' in capsys.readouterr().out
        assert (tmp_path / 'SC2.4.10.zip').read_bytes() == GAME_ZIP
        assert ('/Linux/SC2.4.10.zip', None) in server.requests
        shutil.rmtree(target); server.requests.clear()
    run(server, target, keep_archive=True, maps=False)                  # the good copy: used as it is
    assert server.requests == [] and 'Using the already downloaded' in capsys.readouterr().out

def test_existing_download_checked_against_pinned_digest(server, tmp_path, monkeypatch, capsys):
    pin_game(monkeypatch)
    other = make_zip(game_entries([('StarCraftII/Libs/extra', b'x', FILE)]), PASSWORD)   # a valid game zip, not it
    (tmp_path / 'SC2.4.10.zip').write_bytes(other)
    run(server, tmp_path / 'StarCraftII', keep_archive=True)
    assert f'its sha256 is {sha(other)}, not {sha(GAME_ZIP)}' in capsys.readouterr().out
    assert (tmp_path / 'SC2.4.10.zip').read_bytes() == GAME_ZIP
    assert not (tmp_path / 'StarCraftII/Libs/extra').exists()

@pytest.mark.parametrize('pinned', [False, True])
def test_full_size_partial_download_verified(server, tmp_path, monkeypatch, capsys, pinned):
    "A .part as long as the file (the server answers 416): a stale one is downloaded again, a good one is used."
    if pinned:
        pin_game(monkeypatch)
    target, part = tmp_path / 'StarCraftII', tmp_path / 'SC2.4.10.zip.part'
    part.write_bytes(b'\0' * len(GAME_ZIP))
    run(server, target, keep_archive=True, maps=False)
    assert 'has the full size but is not usable' in capsys.readouterr().out
    assert (tmp_path / 'SC2.4.10.zip').read_bytes() == GAME_ZIP and not part.exists()
    shutil.rmtree(target); (tmp_path / 'SC2.4.10.zip').rename(part); server.requests.clear()
    run(server, target, keep_archive=True, maps=False)
    assert server.requests == [('/Linux/SC2.4.10.zip', f'bytes={len(GAME_ZIP)}-')]    # nothing downloaded again
    assert 'verified' in capsys.readouterr().out
    assert (target / 'Versions/Base75689/SC2_x64').read_bytes() == SC2_X64

@pytest.mark.parametrize('pinned', [False, True])
def test_resume_onto_a_stale_partial_file_starts_over(server, tmp_path, monkeypatch, capsys, pinned):
    "The .part holds the start of another file: the resumed download does not verify, so it starts again, once."
    if pinned:
        pin_game(monkeypatch)
    target = tmp_path / 'StarCraftII'
    (tmp_path / 'SC2.4.10.zip.part').write_bytes(b'PK\x03\x04' + os.urandom(len(GAME_ZIP) // 2))
    run(server, target, keep_archive=True)
    assert 'the partial file it continued was stale' in capsys.readouterr().out
    assert [r for _, r in server.requests[:2]] == [f'bytes={len(GAME_ZIP) // 2 + 4}-', None]
    assert (tmp_path / 'SC2.4.10.zip').read_bytes() == GAME_ZIP
    assert_installed(target)

def test_mini_games_zip_must_hold_all_seven(server, tmp_path):
    server.files['/mini_games.zip'] = make_zip([(f'mini_games/{m}.SC2Map', b'm', FILE) for m in sc2i.MINI_GAMES[:-1]])
    with pytest.raises(sc2i.InstallError, match=f'mini_games.zip lacks mini_games/{sc2i.MINI_GAMES[-1]}.SC2Map; the '
                                                f'download from .* was deleted'):
        run(server, tmp_path / 'StarCraftII')
    assert not (tmp_path / 'StarCraftII').exists() and not (tmp_path / 'mini_games.zip').exists()
