#!/usr/bin/env python
"""The policy's entropy over training, real game vs simulation: where SC2-RL's A2C leaves uniform play.

    python lab/sc2rl_oracle/entropy.py --checkout $SC2RL --runs $OUT/judge [--map MoveToBeacon] [--every 1500]

SC2-RL's A2C saves `losses['entropies']` (one value per update of 60 logged steps, the negated mean over the batch of the
masked action-id distribution's entropy; printed here as the entropy) in each run's `.npy`: the final real runs' files are in the checkout's
`Results/<Map>/`, the judge's beside its log. Uniform play over the 9 of SC2-RL's 20 functions a selected marine has
on MoveToBeacon reads about ln 9 = 2.20 (about 2.15 with the few steps before anything is selected); a run that
has found the beacon drops below. Prints one row per run: the mean entropy over each window of `--every` logged
steps, and the first logged step where it leaves the start (below its first window's mean by 0.3).
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sc2rl_runs as R  # noqa: E402

UNROLL = 60   # logged steps per update (train_v5.py: one update per trajectory of 60)


def entropies(npy: Path) -> np.ndarray:
    return -np.asarray(np.load(npy, allow_pickle=True).item()['losses']['entropies'], float)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--checkout', type=Path, required=True)
    ap.add_argument('--runs', type=Path, nargs='*', default=[], help="run_judge.py output folders' parents")
    ap.add_argument('--map', default='MoveToBeacon')
    ap.add_argument('--every', type=int, default=1500, help='window, logged steps (a multiple of 60)')
    ap.add_argument('--until', type=int, default=18000)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(a.checkout))   # the .npy files pickle SC2-RL's network classes
    real = [(i, p) for i in R.A2C_RUNS[a.map]['ids'] for p in (a.checkout / 'Results' / a.map).glob(f'S_*_{i}.npy')]
    sim = [(f'{d.parent.name}/{d.name}', p) for r in a.runs for d in sorted(r.glob(f'{a.map}_s*'))
           for p in (d / a.map).glob('S_*.npy')]
    w = a.every // UNROLL
    marks = list(range(a.every, a.until + 1, a.every))
    print(f"{'run':<34}" + ''.join(f'{m:>7}' for m in marks) + '  leaves uniform at')
    for kind, rows in (('real', real), ('sim', sim)):
        for name, p in rows:
            h = entropies(p)
            means = [h[i - w:i].mean() if i <= len(h) else np.nan for i in range(w, w * len(marks) + 1, w)]
            left = np.nonzero(h[:a.until // UNROLL] < h[:w].mean() - 0.3)[0]
            print(f'{kind + " " + name:<34}' + ''.join(f'{m:7.2f}' for m in means)
                  + f'  {(left[0] + 1) * UNROLL if len(left) else "not by " + str(min(len(h) * UNROLL, a.until))}')


if __name__ == '__main__':
    main()
