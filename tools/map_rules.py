#!/usr/bin/env python
"""Print the rules of the StarCraft II mini-game maps that the JAX simulations (nbs/18) re-implement: each map's
regions, the units and points placed in the editor (`Objects`: mineral fields, geysers, named points) and the
trigger-script lines that place units, score and respawn, read from the `.SC2Map` archives.

    python tools/map_rules.py                  # fetches the maps from PyPI (pysc2-evolved bundles pysc2's
                                               # mini_games.zip maps), into a temporary folder
    python tools/map_rules.py PATH/TO/mini_games [MoveToBeacon ...]   # or read an unpacked mini_games folder

Needs `mpyq` (`pip install mpyq`); the PyPI route needs `pip` and the network.
"""
import re, subprocess, sys, tarfile, tempfile
from pathlib import Path

MAPS = ('MoveToBeacon', 'CollectMineralShards', 'FindAndDefeatZerglings', 'DefeatRoaches', 'DefeatZerglingsAndBanelings',
        'CollectMineralsAndGas', 'BuildMarines')
KEYS = re.compile(r'CameraPan|RegionRandomPoint|DistanceBetweenPoints|UnitInRegion|CreateUnits|RegionSetCenter|'
                  r'PointWithOffset|TimerStart|UnitGroupSelect|c_playerPropCurriculumScore, c_playerPropOperAdd|'
                  r'TriggerAddEvent')

def fetch(tmp: Path) -> Path:
    subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '--no-binary', ':all:',
                    'pysc2-evolved==1.1.1', '-d', str(tmp)], check=True)
    with tarfile.open(next(tmp.glob('pysc2_evolved-*.tar.gz'))) as t:
        members = [m for m in t.getmembers() if m.isfile() and m.name.endswith('.SC2Map')]
        # a downloaded archive is untrusted: 'data' refuses members that would land outside tmp (Python >= 3.10.12)
        t.extractall(tmp, members=members, **({'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}))
    return next(tmp.rglob('MoveToBeacon.SC2Map')).parent

def main(argv):
    try: import mpyq
    except ImportError: raise SystemExit("tools/map_rules.py reads .SC2Map archives with mpyq: pip install mpyq")
    tmp = tempfile.TemporaryDirectory()
    folder = Path(argv[0]) if argv else fetch(Path(tmp.name))
    for name in argv[1:] or MAPS:
        path = folder / f'{name}.SC2Map'
        if not path.exists(): raise SystemExit(f"No {path}: give the folder holding the mini-game .SC2Map files.")
        archive = mpyq.MPQArchive(str(path))
        print(f'== {name}')
        regions = archive.read_file('Regions').decode('utf-8-sig')
        for rid, body in re.findall(r'<region id="(\d+)">(.*?)</region>', regions, re.S):
            shapes = ['-' * ('<negative/>' in sh) + ' '.join(f'{k}={v}' for k, v in re.findall(r'<(quad|center|radius) value="([^"]+)"', sh))
                      for sh in re.findall(r'<shape type="\w+">(.*?)</shape>', body, re.S)]
            label = re.search(r'<name value="([^"]*)"', body).group(1)
            print(f'  region {rid} {label!r}: ' + '; '.join(shapes))
        objects = (archive.read_file('Objects') or b'').decode('utf-8-sig')
        for kind, attrs in re.findall(r'<Object(Unit|Point)\b([^>]*)>', objects):
            a = dict(re.findall(r'(\w+)="([^"]*)"', attrs))
            what = a.get('UnitType') if kind == 'Unit' else f"point {a.get('Name', '')!r}"
            print(f'  object {what} at {a.get("Position", "?")}' + (f' (id {a["Id"]})' if kind == 'Point' else ''))
        for line in archive.read_file('MapScript.galaxy').decode('utf-8-sig').splitlines():
            if KEYS.search(line): print('   ', line.strip())

if __name__ == '__main__': main(sys.argv[1:])
