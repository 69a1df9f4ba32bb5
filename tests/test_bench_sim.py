"bench/sim.py runs end to end (a smoke run of our maps; JaxMARL's SMAX is a benchmark dependency, left out here)."
import json, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def test_sim_bench_quick(tmp_path):
    out = tmp_path / 'sim.json'
    r = subprocess.run([sys.executable, str(ROOT / 'bench' / 'sim.py'), '--quick', '--maps', 'MoveToBeacon', '--smax',
                        '--json', str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    assert set(res['steps_per_s']) == {'jax:MoveToBeacon|16'} and res['steps_per_s']['jax:MoveToBeacon|16'] > 0
    assert 'jax:MoveToBeacon' in r.stdout

def test_sim_bench_rejects_unknown_map():
    r = subprocess.run([sys.executable, str(ROOT / 'bench' / 'sim.py'), '--quick', '--maps', 'MoveToBacon', '--smax'],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode != 0 and 'MoveToBacon' in r.stderr and 'MoveToBeacon' in r.stderr
