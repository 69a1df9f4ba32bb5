"""A StarCraft II install whose game binary is a stand-in that speaks the game's protocol (`game.py`), for tests and
benchmarks of the real-game path on machines without the game.

`lay_out(root)` writes the folders a real Linux install has where pysc2 and `reaver doctor` look for them:

    root/Versions/Base75689/SC2_x64     the launcher: dies with signal 11 when a tcmalloc is in LD_PRELOAD (as the game
                                        does on Colab), else runs game.py with this Python
    root/Maps/mini_games/<Map>.SC2Map   one small file per mini-game (not a real map: the stand-in reads its name)
    root/Libs/  root/SC2Data/  root/Battle.net/  root/Replays/
    root/Cache/jax/                     the stand-ins' shared JAX compilation cache

`game_zip()` and `maps_zip()` are the same install as the archives Blizzard and DeepMind publish (a ZipCrypto zip with
the EULA password holding `StarCraftII/...`; an unencrypted `mini_games/` zip), and `Mirror` serves them over HTTPS on
127.0.0.1 where the installer looks for them (`/Linux/SC2.4.10.zip`, `/mini_games.zip`). Nothing here is part of the
package a user installs.
"""
from __future__ import annotations
import hashlib, http.server, io, os, ssl, stat, struct, subprocess, sys, threading, zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
GAME = HERE / 'game.py'
BUILD = 75689
MINI_GAMES = ('MoveToBeacon', 'CollectMineralShards', 'FindAndDefeatZerglings', 'DefeatRoaches',
              'DefeatZerglingsAndBanelings', 'CollectMineralsAndGas', 'BuildMarines')
PASSWORD = b'iagreetotheeula'

LAUNCHER = """#!/bin/sh
# The StarCraft II stand-in (reaver_nb's tools/sc2_standin): what pysc2 launches as the game binary.
# Like the real game on Colab it dies with signal 11 when a tcmalloc library (a file named libtcmalloc*.so*, any case)
# is in LD_PRELOAD (entries separated by colons or spaces); it only reads the variable.
for lib in $(printf '%s' "$LD_PRELOAD" | tr ':' ' '); do
  case "$(printf '%s' "${{lib##*/}}" | tr 'A-Z' 'a-z')" in
    libtcmalloc*.so*) sleep 0.2; kill -s SEGV $$ ;;
  esac
done
unset LD_PRELOAD
# the game runs on the CPU, one thread, as each real game process does
export JAX_PLATFORMS=cpu XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
exec "{python}" "{game}" "$@"
"""

FILE, EXE, DIR = stat.S_IFREG | 0o644, stat.S_IFREG | 0o755, stat.S_IFDIR | 0o755


def launcher(python: str | os.PathLike = sys.executable) -> bytes:
    "The `SC2_x64` script: runs the stand-in with `python` (which must import reaver_nb and pysc2)."
    return LAUNCHER.format(python=python, game=GAME).encode()


def map_file(name: str) -> bytes:
    return f"reaver_nb StarCraft II stand-in map: {name} (not a real SC2Map; the stand-in reads its name)\n".encode()


def entries(python=sys.executable, maps=True) -> list[tuple[str, bytes, int]]:
    "The install's files as (path under the install, data, st_mode)."
    out = [('Versions/', b'', DIR), (f'Versions/Base{BUILD}/', b'', DIR),
           (f'Versions/Base{BUILD}/SC2_x64', launcher(python), EXE),
           ('Libs/', b'', DIR), ('SC2Data/', b'', DIR), ('Battle.net/', b'', DIR), ('Replays/', b'', DIR),
           ('Maps/', b'', DIR)]
    if maps: out += [('Maps/mini_games/', b'', DIR)] + [(f'Maps/mini_games/{m}.SC2Map', map_file(m), FILE)
                                                       for m in MINI_GAMES]
    return out


def lay_out(root: str | os.PathLike, python=sys.executable, maps=True) -> Path:
    "Write a stand-in install into `root` (the `StarCraftII` folder itself); returns it. Point SC2PATH at it."
    root = Path(root)
    for name, data, mode in entries(python, maps):
        p = root / name
        if stat.S_ISDIR(mode): p.mkdir(parents=True, exist_ok=True); continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        p.chmod(stat.S_IMODE(mode))
    (root / 'Cache' / 'jax').mkdir(parents=True, exist_ok=True)
    return root


def game_zip(python=sys.executable) -> bytes:
    "The install as Blizzard publishes the game: `StarCraftII/...` in a ZipCrypto zip with the EULA password."
    return make_zip([('StarCraftII/', b'', DIR)] + [('StarCraftII/' + n, d, m) for n, d, m in entries(python, False)],
                    PASSWORD)


def maps_zip() -> bytes:
    "The mini-games as DeepMind publishes them: `mini_games/<Map>.SC2Map` in a plain zip."
    return make_zip([('mini_games/', b'', DIR)] + [(f'mini_games/{m}.SC2Map', map_file(m), FILE) for m in MINI_GAMES])


class Mirror:
    """Blizzard's CDN and DeepMind's maps release for the installer, on 127.0.0.1 over HTTPS: `files` (path -> bytes),
    by default the stand-in's game zip at `/Linux/SC2.4.10.zip` and its maps at `/mini_games.zip`, with a throwaway
    self-signed certificate made by `openssl` in `folder`: point `SSL_CERT_FILE` at `cafile` to trust it."""
    def __init__(self, folder, files=None, python=sys.executable):
        self.files = files or {'/Linux/SC2.4.10.zip': game_zip(python), '/mini_games.zip': maps_zip()}
        folder = Path(folder); folder.mkdir(parents=True, exist_ok=True)
        self.cafile, key = folder / 'mirror.pem', folder / 'mirror.key'
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', str(key), '-out',
                        str(self.cafile), '-days', '2', '-subj', '/CN=127.0.0.1', '-addext',
                        'subjectAltName=IP:127.0.0.1'], check=True, capture_output=True)
        files, self.requests = self.files, []
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_GET(self):
                mirror.requests.append(self.path)
                data = files.get(self.path)
                if data is None: self.send_error(404); return
                self.send_response(200); self.send_header('Content-Length', str(len(data))); self.end_headers()
                self.wfile.write(data)
        mirror = self
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(self.cafile), str(key))
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f'https://127.0.0.1:{self.httpd.server_address[1]}'
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def sha256(self, path: str) -> str: return hashlib.sha256(self.files[path]).hexdigest()
    def close(self): self.httpd.shutdown(); self.httpd.server_close()


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
    """A zip of `entries`, stored (uncompressed) unless crafted otherwise: (name, data, mode) with mode a full st_mode
    (S_IFREG/S_IFDIR/S_IFLNK; a symlink's data is its destination), made on Unix (create_system 3). With `password`:
    ZipCrypto, flag bit 0, a 12-byte encryption header whose last byte is the declared CRC's high byte. A non-ASCII
    name is stored as UTF-8 (flag bit 11). A fourth item, a dict, crafts the entry: `extra` (bytes, both headers),
    `central_extra`, `local_extra`, `local_name` (bytes), `host` (create_system), `attr` (the whole external
    attributes), `method` (8: the data is deflated; another number is only written in the headers), `size` and `crc`
    (the uncompressed size and CRC-32 declared in both headers, instead of the data's)."""
    out, central = io.BytesIO(), []
    for name, data, mode, *more in entries:
        o = more[0] if more else {}
        crc, size, method = o.get('crc', zlib.crc32(data)), o.get('size', len(data)), o.get('method', 0)
        body, flags = data, 0 if name.isascii() else 0x800
        if method == 8:
            squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
            body = squeeze.compress(data) + squeeze.flush()
        if password:
            z = ZipCrypto(password)
            body, flags = z.encrypt(os.urandom(11) + bytes([crc >> 24])) + z.encrypt(body), flags | 1
        offset, raw = out.tell(), name.encode()
        local_name = o.get('local_name', raw)
        local_extra = o.get('local_extra', o.get('extra', b''))
        central_extra = o.get('central_extra', o.get('extra', b''))
        out.write(struct.pack('<IHHHHHIIIHH', 0x04034B50, 20, flags, method, 0, 0x21, crc, len(body), size,
                              len(local_name), len(local_extra)))
        out.write(local_name + local_extra + body)
        attr = o.get('attr', (mode << 16) | (0x10 if stat.S_ISDIR(mode) else 0))
        central.append(struct.pack('<IHHHHHHIIIHHHHHII', 0x02014B50, (o.get('host', 3) << 8) | 20, 20, flags,
                                   method, 0, 0x21, crc, len(body), size, len(raw), len(central_extra), 0, 0, 0, attr,
                                   offset) + raw + central_extra)
    start = out.tell()
    for c in central: out.write(c)
    out.write(struct.pack('<IHHHHIIH', 0x06054B50, 0, 0, len(central), len(central), out.tell() - start, start, 0))
    return out.getvalue()
