"""Tests of the StarCraft II installer (reaver_nb/sc2/installer.py) against a local HTTP server serving small archives
laid out like the real ones: a ZipCrypto-encrypted game zip (StarCraftII/Versions/Base75689/SC2_x64, ...), an
unencrypted mini_games.zip and an encrypted ladder map pack. Every failure test also checks that no half-installed
game and no staging folder is left behind."""
import http.server, importlib, io, os, stat, struct, subprocess, sys, threading, types, zipfile, zlib
from pathlib import Path
import pytest

sc2i = importlib.import_module("reaver_nb.sc2.installer")

PASSWORD = b'iagreetotheeula'
HAS_UNZIP = sc2i.shutil.which('unzip') is not None
EXTRACTORS = [pytest.param('unzip', marks=pytest.mark.skipif(not HAS_UNZIP, reason='no unzip program')), 'python']

# %% a tiny ZipCrypto (traditional PKWARE) zip writer: Python's zipfile can only read encrypted zips
def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8): c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table
CRC_TABLE = _crc_table()

class ZipCrypto:
    "The traditional PKWARE stream cipher: three 32-bit keys updated with CRC-32 steps by every plaintext byte."
    def __init__(self, password: bytes):
        self.k = [0x12345678, 0x23456789, 0x34567890]
        for b in password: self._update(b)
    def _crc(self, crc, b): return (crc >> 8) ^ CRC_TABLE[(crc ^ b) & 0xFF]
    def _update(self, b):
        k0 = self._crc(self.k[0], b)
        k1 = ((self.k[1] + (k0 & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        self.k = [k0, k1, self._crc(self.k[2], k1 >> 24)]
    def encrypt(self, data: bytes) -> bytes:
        out = bytearray()
        for b in data:
            t = (self.k[2] | 2) & 0xFFFF
            out.append(b ^ (((t * (t ^ 1)) >> 8) & 0xFF))
            self._update(b)
        return bytes(out)

def make_zip(entries, password: bytes | None = None) -> bytes:
    """A stored (uncompressed) zip of `entries`: (name, data, mode) with mode a full st_mode (S_IFREG/S_IFDIR/S_IFLNK;
    a symlink's data is its destination), made on Unix (create_system 3). With `password`: ZipCrypto, flag bit 0,
    a 12-byte encryption header whose last byte is the CRC's high byte."""
    out, central = io.BytesIO(), []
    for name, data, mode in entries:
        crc = zlib.crc32(data)
        body, flags = data, 0
        if password:
            z = ZipCrypto(password)
            body, flags = z.encrypt(os.urandom(11) + bytes([crc >> 24])) + z.encrypt(data), 1
        offset, raw = out.tell(), name.encode()
        out.write(struct.pack('<IHHHHHIIIHH', 0x04034B50, 20, flags, 0, 0, 0x21, crc, len(body), len(data),
                              len(raw), 0))
        out.write(raw + body)
        attr = (mode << 16) | (0x10 if stat.S_ISDIR(mode) else 0)
        central.append(struct.pack('<IHHHHHHIIIHHHHHII', 0x02014B50, (3 << 8) | 20, 20, flags, 0, 0, 0x21, crc,
                                   len(body), len(data), len(raw), 0, 0, 0, 0, attr, offset) + raw)
    start = out.tell()
    for c in central: out.write(c)
    out.write(struct.pack('<IHHHHIIH', 0x06054B50, 0, 0, len(central), len(central), out.tell() - start, start, 0))
    return out.getvalue()

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
    (path -> bytes sent before the connection is dropped, once), `ignore_range`, `no_length` (close-delimited body)."""
    def __init__(self):
        self.files, self.requests, self.drop_after = {}, [], {}
        self.ignore_range, self.no_length = False, False
        server = self
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_GET(self):
                server.requests.append((self.path, self.headers.get('Range')))
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

def run(server, target, **kw):
    "install() against the local server, quietly."
    kw = {'accept_eula': True, 'base_url': server.url, 'maps_url': server.url + '/mini_games.zip', 'progress': False,
          'timeout': 10, **kw}
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
EVIL = {'dotdot': ('StarCraftII/../../evil.txt', [('StarCraftII/../../evil.txt', b'pwned', FILE)]),
        'absolute': ('/tmp/reaver-evil.txt', [('/tmp/reaver-evil.txt', b'x', FILE)]),
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
    assert not Path('/tmp/reaver-evil.txt').exists()

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
            '--no-progress']
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
