#!/usr/bin/env python
"""The record of the fast judge's runs (issue 58): one row per run, written from the runs' own output folders.

    python lab/sc2rl_oracle/record.py $OUT/fast_judge/MoveToBeacon_s0 ... --out lab/sc2rl_oracle/data/fast_judge_runs.csv

Each folder is one `fast_judge.py` run (`run_info.json`, `<Map>/Logging/FJ<seed>.txt`, the losses `.npy`). A row:
the map, the variant (the probe, then every `MiniGameOptions` field that differs from the fast judge's default, as
`field=value`, in the fields' order; a probe that became a setting is named as the setting; `default` when none), the
seed, the envs (SC2-RL's processes) and screen resolution, the logged steps it was asked for and reached (a run
stopped early reaches fewer), the test interval, every test score as `step:score` pairs, the logged step where the function
entropy leaves uniform play (`entropy.py`'s rule: the first update 0.3 below the first 1,500 logged steps' mean;
empty when it never does, `unknown` for a run stopped before it saved them), the start time, wall and CPU
seconds. The calibration notebook (18z) renders it and the lab's run notes cite it; nothing types its scores again.
Rows are sorted by map, variant, seed, start.
"""
from __future__ import annotations
import argparse, csv, dataclasses, json, sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))
from fast_judge import BECAME_SETTINGS  # noqa: E402
import sc2rl_runs  # noqa: E402
FIELDS = ('map', 'variant', 'seed', 'procs', 'res', 'asked', 'reached', 'test_interval', 'scores', 'leaves_uniform',
          'started', 'wall_s', 'cpu_s')
UNROLL = 60


def variant(info: dict) -> str:
    from reaver_nb.envs.sim import MiniGameOptions
    d = dataclasses.asdict(MiniGameOptions())
    probe = info.get('probe')
    diff = [f'{k}={v}' for k, v in info['sim'].items() if k in d and d[k] != v]
    if probe in BECAME_SETTINGS: probe, diff = None, [BECAME_SETTINGS[probe]] + diff
    parts = ([probe] if probe else []) + diff
    return ' + '.join(parts) or 'default'


def leaves_uniform(npy: Path) -> str:
    h = -np.asarray(np.load(npy, allow_pickle=True).item()['losses']['entropies'], float)
    w = 1500 // UNROLL
    if len(h) < w: return ''
    left = np.nonzero(h < h[:w].mean() - 0.3)[0]
    return str((left[0] + 1) * UNROLL) if len(left) else ''


def row(folder: Path) -> dict:
    info = json.loads((folder / 'run_info.json').read_text())
    m = info['map']
    log = next((folder / m / 'Logging').glob('FJ*.txt'))
    pts = [l.strip().split(',') for l in log.read_text().splitlines()[1:] if l.strip()]
    npy = next((folder / m).glob('S_*.npy'), None)
    return dict(map=m, variant=variant(info), seed=info['seed'], procs=info['n_envs'], res=info['res'],
                asked=info['logged_steps'],
                reached=int(pts[-1][0]) if pts else 0, test_interval=info['test_interval'],
                scores=';'.join(f'{s}:{v}' for s, v in pts), leaves_uniform=leaves_uniform(npy) if npy else 'unknown',
                started=info.get('started', ''), wall_s=info.get('wall_s', ''), cpu_s=info.get('cpu_s', ''))


REAL_KINDS = ('final', 'batch-study-8', 'batch-study-16', 'batch-study-32')


def real_marks(points: Path, out: Path, map_name='MoveToBeacon', every=3000, until=36000):
    """The real test scores of `map_name` every `every` logged steps to `until` (SC2-RL's logs, read from the checkout
    by real_curves.py): the 5 final runs (tested every 6,000) and, for MoveToBeacon, Part25's 8-, 16- and 32-process
    batch-study runs (tested every 60)."""
    with open(points) as f:
        pts = [r for r in csv.DictReader(f) if r['map'] == map_name and r['kind'] in REAL_KINDS
               and int(r['logged_step']) % every == 0 and int(r['logged_step']) <= until]
    if not pts: raise SystemExit(f'no real {map_name} marks in {points}: pass real_curves.py --curves-out of that map')
    with open(out, 'w', newline='') as f:
        f.write(f"# SC2-RL's real {map_name} runs (nicoladainese96/SC2-RL@20eaff0 Results/{map_name}), "
                f"test score (mean of 5 episodes) every {every:,} logged steps to {until:,}; written by "
                "lab/sc2rl_oracle/record.py --real "
                f"from real_curves.py {'--batch-study ' if map_name == 'MoveToBeacon' else ''}--curves-out\n")
        w = csv.writer(f); w.writerow(('run', 'kind', 'logged_step', 'score'))
        for r in sorted(pts, key=lambda r: (REAL_KINDS.index(r['kind']), r['run'], int(r['logged_step']))):
            w.writerow((r['run'], r['kind'], r['logged_step'], r['score']))
    print(f'{len(pts)} real marks -> {out}')


def real_leaves_uniform(checkout: Path, out: Path):
    """Where each real MoveToBeacon run of `real_marks` leaves uniform play, by the same rule as the judge's runs, from
    the losses SC2-RL saved beside its logs (`Results/MoveToBeacon/S_*_<ID>.npy`; 'no losses' where the checkout has
    none)."""
    import sc2rl_runs as R
    sys.path.insert(0, str(checkout))   # the .npy files pickle SC2-RL's network classes
    groups = [('final', R.A2C_RUNS['MoveToBeacon']['ids'])] + [(f'batch-study-{p}', R.A2C_BATCH_STUDY[p])
                                                               for p in (8, 16, 32)]
    rows = []
    for kind, ids in groups:
        for i in sorted(ids):
            npy = sorted((checkout / 'Results' / 'MoveToBeacon').glob(f'S_*_{i}.npy'))
            rows.append((i, kind, leaves_uniform(npy[0]) if npy else 'no losses'))
    with open(out, 'w', newline='') as f:
        f.write("# where SC2-RL's real MoveToBeacon runs leave uniform play (logged steps; record.py's rule), from the "
                "losses in nicoladainese96/SC2-RL@20eaff0 Results/MoveToBeacon; written by lab/sc2rl_oracle/record.py "
                "--real-entropy\n")
        w = csv.writer(f); w.writerow(('run', 'kind', 'leaves_uniform')); w.writerows(rows)
    print(f'{len(rows)} real runs -> {out}')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('folders', type=Path, nargs='*')
    ap.add_argument('--out', type=Path, default=HERE / 'data' / 'fast_judge_runs.csv')
    ap.add_argument('--real', type=Path, help="real_curves.py's --curves-out CSV (with --batch-study for MoveToBeacon): "
                    "writes the real marks of --real-map beside the record instead")
    ap.add_argument('--real-map', default='MoveToBeacon', choices=sc2rl_runs.MAPS,
                    help='with --real: the map whose marks to write')
    ap.add_argument('--real-entropy', type=Path, metavar='CHECKOUT', help="SC2-RL's checkout: writes where each real "
                    'run of the marks leaves uniform play (data/real_leaves_uniform_MoveToBeacon.csv) instead')
    a = ap.parse_args(argv)
    if a.real: return real_marks(a.real, HERE / 'data' / f'real_marks_{a.real_map}.csv', a.real_map)
    if a.real_entropy: return real_leaves_uniform(a.real_entropy, HERE / 'data' / 'real_leaves_uniform_MoveToBeacon.csv')
    rows = sorted((row(f) for f in a.folders), key=lambda r: (r['map'], int(r['procs']), int(r['res']),
                                                               r['variant'] != 'default', r['variant'],
                                                               int(r['seed']), r['started']))
    with open(a.out, 'w', newline='') as f:
        f.write('# the fast judge runs of issue 58, written by lab/sc2rl_oracle/record.py from the runs\' folders\n')
        w = csv.DictWriter(f, FIELDS); w.writeheader(); w.writerows(rows)
    for r in rows:
        print(r['map'], r['variant'], r['seed'], r['procs'], r['res'], r['reached'], r['scores'], r['leaves_uniform'])


if __name__ == '__main__':
    sys.exit(main())
