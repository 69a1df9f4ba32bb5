#!/usr/bin/env python
"""SC2-RL's real-game learning curves, read from a checkout at run time (nothing of SC2-RL is stored here).

    python lab/sc2rl_oracle/real_curves.py --checkout $SC2RL [--out $OUT/sc2rl_real_curves.csv]
        [--curves-out $OUT/sc2rl_real_curves_long.csv] [--plot $OUT/sc2rl_real_plots] [--maps MoveToBeacon ...]
        [--earlier] [--batch-study] [--procs MoveToBeacon=20 ...]

For every map: the A2C runs named final by SC2-RL's `Notebooks/Part25_A2C_final_results` (for DefeatRoaches,
CollectMineralsAndGas and BuildMarines, the only A2C log there is), each run's curve in logged steps and in frames
(agent steps = logged steps x the run's process count, see sc2rl_runs.py), its plateau (mean of the last 10 logged
points, as Part25 cell 8 computes it), its score at fixed logged-step marks, and the logged steps (and frames) to half
and to 90% of its plateau: first crossing of the raw 5-episode means, and of their trailing 5-point mean. A `mean`
row per map averages the final runs over their common prefix. IMPALA's final logs are not in the repository
(../logs/torchbeast), so there are no IMPALA rows.
"""
from __future__ import annotations
import argparse, tempfile, csv, math, os, subprocess, sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sc2rl_runs as R  # noqa: E402

MARKS = (6000, 12000, 18000, 24000, 30000, 60000, 120000, 300000, 600000, 1_200_000, 2_400_000)
PLATEAU_POINTS = 10  # Part25 cell 8: logging[-10:, 1].mean()


def checkout_commit(checkout: Path) -> str | None:
    "The commit of a checkout: git HEAD if it is a git work tree, else the `.sc2rl_commit` file checkout.sh writes."
    f = checkout / '.sc2rl_commit'
    if f.exists(): return f.read_text().split()[0]
    try:
        return subprocess.run(['git', '-C', str(checkout), 'rev-parse', 'HEAD'], capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:
        return None


def load_log(checkout: Path, m: str, run_id: str) -> np.ndarray:
    "A `Results/<Map>/Logging/<ID>.txt` log as an (n, 2) array of (logged step, score)."
    path = checkout / 'Results' / m / 'Logging' / f'{run_id}.txt'
    with open(path) as f:
        header = f.readline().strip()
    if header != '#Steps,score': raise ValueError(f'{path}: unexpected header {header!r}')
    a = np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)
    if a.shape[1] != 2 or np.any(np.diff(a[:, 0]) <= 0): raise ValueError(f'{path}: not a (step, score) curve')
    return a


def first_crossing(steps: np.ndarray, y: np.ndarray, level: float) -> float:
    idx = np.nonzero(y >= level)[0]
    return float(steps[idx[0]]) if len(idx) else math.nan


def trailing_mean(y: np.ndarray, w: int = 5) -> np.ndarray:
    c = np.cumsum(np.insert(np.asarray(y, float), 0, 0.0))
    out = np.empty(len(y))
    for i in range(len(y)):
        lo = max(0, i - w + 1)
        out[i] = (c[i + 1] - c[lo]) / (i + 1 - lo)
    return out


def score_at(steps: np.ndarray, y: np.ndarray, mark: int) -> float:
    "The logged score at the last logged step <= mark (NaN before the first point or past the last)."
    if mark < steps[0] or mark > steps[-1]: return math.nan
    return float(y[np.searchsorted(steps, mark, side='right') - 1])


def summarise(m: str, algo: str, run_id: str, kind: str, curve: np.ndarray, procs, procs_source: str) -> dict:
    steps, y = curve[:, 0], curve[:, 1]
    tail = y[-PLATEAU_POINTS:]
    plateau = float(tail.mean())
    row = dict(map=m, algo=algo, run=run_id, kind=kind, procs=procs if procs else '',
               procs_source=procs_source, frames_per_logged_step=procs if procs else '',
               n_points=len(steps), first_logged_step=int(steps[0]), last_logged_step=int(steps[-1]),
               last_frames=int(steps[-1] * procs) if procs else '',
               plateau=round(plateau, 3), plateau_sem=round(float(tail.std() / math.sqrt(len(tail))), 3),
               max_score=float(y.max()))
    for mk in MARKS: row[f'score@{mk}'] = score_at(steps, y, mk)
    ma = trailing_mean(y)
    for frac, name in ((0.5, 'half'), (0.9, '90')):
        if plateau > 0:
            s_raw, s_ma = first_crossing(steps, y, frac * plateau), first_crossing(steps, ma, frac * plateau)
        else:
            s_raw = s_ma = math.nan
        row[f'steps_to_{name}'] = s_raw
        row[f'steps_to_{name}_ma5'] = s_ma
        row[f'frames_to_{name}'] = s_raw * procs if procs and not math.isnan(s_raw) else math.nan
        row[f'frames_to_{name}_ma5'] = s_ma * procs if procs and not math.isnan(s_ma) else math.nan
    return row


def runs_for(m: str, earlier: bool, batch_study: bool, procs_override: dict):
    "(run_id, kind, procs, procs_source) for the A2C runs of map `m` that this report covers."
    cfg = R.A2C_RUNS[m]
    procs = procs_override.get(m, cfg['procs'])
    src = 'set with --procs' if m in procs_override else cfg['procs_source']
    out = [(i, 'final' if cfg['final'] else 'logged (not final)', procs, src) for i in cfg['ids']]
    if earlier:
        out += [(i, 'earlier', None, 'unknown: not recorded') for i in R.A2C_EARLIER.get(m, ())]
    if batch_study and m == 'MoveToBeacon':
        out += [(i, f'batch-study-{p}', p, 'Part25 batch study (exact)') for p, ids in R.A2C_BATCH_STUDY.items()
                for i in ids]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--checkout', required=True, type=Path, help='an SC2-RL checkout (see checkout.sh)')
    ap.add_argument('--out', type=Path, default=Path(tempfile.gettempdir()) / 'sc2rl_real_curves.csv', help='summary CSV')
    ap.add_argument('--curves-out', type=Path, help='long-format CSV of every point (map, run, step, frames, score)')
    ap.add_argument('--plot', type=Path, help='folder for one PNG per map (logged steps and frames)')
    ap.add_argument('--maps', nargs='*', default=list(R.MAPS), choices=R.MAPS)
    ap.add_argument('--earlier', action='store_true', help='add the earlier non-final logs (OWAJ, MQTT, MLZP)')
    ap.add_argument('--batch-study', action='store_true', help="add Part25's MoveToBeacon batch-study runs")
    ap.add_argument('--procs', nargs='*', default=[], metavar='MAP=K',
                    help='override the process count (frames per logged step) of a map')
    a = ap.parse_args(argv)

    ck = a.checkout.resolve()
    if not (ck / 'Results').is_dir(): sys.exit(f'{ck}: no Results/ folder; is this an SC2-RL checkout?')
    commit = checkout_commit(ck)
    if commit != R.PINNED_COMMIT:
        print(f'warning: checkout commit {commit} is not the pinned {R.PINNED_COMMIT}', file=sys.stderr)
    procs_override = {k: int(v) for k, v in (p.split('=') for p in a.procs)}

    rows, long_rows, curves = [], [], {}
    for m in a.maps:
        curves[m] = []
        finals = []
        for run_id, kind, procs, src in runs_for(m, a.earlier, a.batch_study, procs_override):
            c = load_log(ck, m, run_id)
            curves[m].append((run_id, kind, procs, c))
            rows.append(summarise(m, 'A2C', run_id, kind, c, procs, src))
            if kind.startswith('final'): finals.append((c, procs, src))
            long_rows += [dict(map=m, run=run_id, kind=kind, logged_step=int(s), frames=int(s * procs) if procs else '',
                               score=float(v)) for s, v in c]
        if len(finals) > 1:
            n = min(len(c) for c, _, _ in finals)
            grid = finals[0][0][:n, 0]
            if all(np.array_equal(c[:n, 0], grid) for c, _, _ in finals):
                mean = np.stack([grid, np.mean([c[:n, 1] for c, _, _ in finals], axis=0)], axis=1)
                rows.append(summarise(m, 'A2C', f'mean of {len(finals)}', 'mean', mean, finals[0][1], finals[0][2]))
                curves[m].append((f'mean of {len(finals)}', 'mean', finals[0][1], mean))

    cols = list(rows[0].keys())
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=cols); w.writeheader(); w.writerows(rows)
    if a.curves_out:
        a.curves_out.parent.mkdir(parents=True, exist_ok=True)
        with open(a.curves_out, 'w', newline='') as f:
            w = csv.DictWriter(f, fieldnames=list(long_rows[0].keys())); w.writeheader(); w.writerows(long_rows)

    fmt = lambda v: '' if v == '' or (isinstance(v, float) and math.isnan(v)) else (
        f'{v:.1f}' if isinstance(v, float) else str(v))
    print(f'SC2-RL checkout {ck} @ {commit}')
    for m in a.maps:
        print(f'\n== {m} (A2C; {R.A2C_RUNS[m]["reported"]})')
        print(f'{"run":>10} {"kind":>18} {"procs":>5} {"pts":>4} {"last step":>10} {"plateau":>8} '
              f'{"@6k":>5} {"@12k":>5} {"@18k":>5} {"@24k":>5} {"@60k":>5} {"@600k":>6} '
              f'{"->half":>8} {"->90%":>8} {"->half ma5":>10} {"->90% ma5":>10}')
        for r in rows:
            if r['map'] != m: continue
            print(f'{r["run"]:>10} {r["kind"]:>18} {fmt(r["procs"]):>5} {r["n_points"]:>4} {r["last_logged_step"]:>10} '
                  f'{r["plateau"]:>8.2f} {fmt(r["score@6000"]):>5} {fmt(r["score@12000"]):>5} '
                  f'{fmt(r["score@18000"]):>5} {fmt(r["score@24000"]):>5} {fmt(r["score@60000"]):>5} '
                  f'{fmt(r["score@600000"]):>6} {fmt(r["steps_to_half"]):>8} {fmt(r["steps_to_90"]):>8} '
                  f'{fmt(r["steps_to_half_ma5"]):>10} {fmt(r["steps_to_90_ma5"]):>10}')
    print(f'\nfrom logged steps to frames: x procs (A2C: train_v5.py:194 adds 1 per step of all envs). '
          f'Summary CSV: {a.out}' + (f'; points: {a.curves_out}' if a.curves_out else ''))

    if a.plot:
        import matplotlib; matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        a.plot.mkdir(parents=True, exist_ok=True)
        for m in a.maps:
            fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
            for run_id, kind, procs, c in curves[m]:
                style = dict(lw=2.2, c='k') if kind == 'mean' else dict(lw=1, alpha=0.6)
                axes[0].plot(c[:, 0], c[:, 1], label=f'{run_id} ({kind})', **style)
                if procs: axes[1].plot(c[:, 0] * procs, c[:, 1], label=f'{run_id} x{procs}', **style)
            axes[0].set_xlabel('logged steps (SC2-RL axis)'); axes[1].set_xlabel('frames (agent steps)')
            for ax in axes: ax.set_ylabel('score (mean of 5 test episodes)'); ax.grid(alpha=0.3)
            axes[0].legend(fontsize=7); axes[0].set_title(f'{m}: SC2-RL A2C on the real game')
            axes[1].set_title('frames = logged steps x processes' if any(p for _, _, p, _ in curves[m])
                              else 'process count unknown')
            fig.tight_layout(); fig.savefig(a.plot / f'{m}.png', dpi=90); plt.close(fig)
        print(f'plots: {a.plot}/<Map>.png')
    return rows


if __name__ == '__main__':
    main()
