"""An interrupted download, then the same call again: bytes fetched by reaver_nb.sc2.installer.download and by
pooch.retrieve from a local Range-capable server (tests/test_sc2_install.py's), and pooch.Unzip on the password-
protected game zip. Run from the checkout: python tools/library_checks/download_vs_pooch.py (needs pooch)."""
import hashlib, importlib.util, os, sys, tempfile, time
from pathlib import Path
import pooch
from reaver_nb.sc2 import installer

spec = importlib.util.spec_from_file_location('t', Path('tests/test_sc2_install.py'))
t = importlib.util.module_from_spec(spec); spec.loader.exec_module(t)
MB = 1 << 20
data = os.urandom(64 * MB); sha = hashlib.sha256(data).hexdigest()
s = t.Server(); s.files['/SC2.zip'] = data; s.files['/game.zip'] = t.GAME_ZIP
url = s.url + '/SC2.zip'

def fetched(reqs):
    return sum(len(data) - (int(r.removeprefix('bytes=').split('-')[0]) if r else 0) for _, r in reqs)

def attempt(name, first_call, second_call):
    s.requests.clear(); s.drop_after['/SC2.zip'] = 48 * MB   # the connection drops at 75%
    try: first_call(); print(f"{name}: first call did not fail?")
    except Exception as e: print(f"{name}: first call failed as it should ({type(e).__name__})")
    first = len(s.requests)
    t0 = time.perf_counter(); second_call(); dt = time.perf_counter() - t0
    again = s.requests[first:]
    print(f"  second call: {len(again)} request(s), Range {[r for _, r in again]}, "
          f"{(len(data) - (int(again[0][1].removeprefix('bytes=').split('-')[0]) if again[0][1] else 0)) / MB:.0f} MiB "
          f"of {len(data) // MB} MiB fetched again, {dt:.2f} s")

with tempfile.TemporaryDirectory() as d:
    dest = Path(d) / 'ours' / 'SC2.zip'; dest.parent.mkdir()
    call = lambda: installer.download(url, dest, sha256=sha, progress=False, allow_http=True, check=lambda f: None)
    attempt('reaver_nb installer.download', call, call)
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    call = lambda: pooch.retrieve(url, known_hash=f'sha256:{sha}', fname='SC2.zip', path=Path(d) / 'pooch',
                                  progressbar=False)
    attempt('pooch.retrieve', call, call)
    try:
        pooch.retrieve(s.url + '/game.zip', known_hash=None, fname='game.zip', path=Path(d) / 'pooch',
                       processor=pooch.Unzip(extract_dir='x'), progressbar=False)
        print('pooch.Unzip unpacked the password-protected zip')
    except Exception as e: print(f"pooch.Unzip on the password-protected game zip: {type(e).__name__}: {e}")
s.close()
