"""Side-by-side learning curves: Reaver 2.1.9's own agent (oracle.py logs) and reaver_nb's default `reaver train`
(run directories), on the same simulation; the rolling mean return of the last 100 episodes against frames.

    python lab/reaver_oracle/curves.py --oracle LOG [LOG ...] --ours RUN_DIR [RUN_DIR ...] [--out curves.png]
    python lab/reaver_oracle/curves.py --oracle fdz.log --ours RUN --no-real --title jax:FindAndDefeatZerglings

Prints a table at every 100k frames and, with --out, draws both sets of curves (matplotlib, reaver_nb's [plot]
extra). Reaver's published real-map log (README of 2018-11-24, inoryy/reaver 8af7b05) is drawn as points.
"""
import argparse, json, re, sys
from pathlib import Path

REAL = [(51_200, 0.14), (102_400, 0.92), (153_600, 1.80), (665_600, 24.26)]   # Reaver's README log, the real map


def oracle_curve(path):
    "(frames, rolling return) from an oracle.py log: its `upd N frames F eps E RMe X` rows."
    rows = re.findall(r'^upd \d+ frames (\d+) eps \d+ RMe ([-\d.na]+)', Path(path).read_text(), re.M)
    return [(int(f), float(r)) for f, r in rows if r != 'nan']


def our_curve(run_dir):
    "(frames, rolling return) from a run directory's metrics.jsonl."
    out = []
    for line in (Path(run_dir) / 'metrics.jsonl').read_text().splitlines():
        row = json.loads(line)
        if row.get('ep_return_mean') is not None: out.append((row['frames'], row['ep_return_mean']))
    return out


def at(curve, frames):
    "The curve's last value at or before `frames` (None before its first row)."
    vals = [r for f, r in curve if f <= frames]
    return vals[-1] if vals else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--oracle', nargs='+', default=[], help="oracle.py logs (Reaver 2.1.9's agent)")
    ap.add_argument('--ours', nargs='+', default=[], help='reaver_nb run directories')
    ap.add_argument('--out', help='write the figure here (PNG)')
    ap.add_argument('--title', default='jax:MoveToBeacon, faithful simulation')
    ap.add_argument('--no-real', action='store_true', help="leave out Reaver's real-map MoveToBeacon log (other maps)")
    ap.add_argument('--every', type=int, default=100_000, help='frames between table columns')
    a = ap.parse_args(argv)
    real = [] if a.no_real else REAL
    curves = [(f'Reaver 2.1.9 agent, {Path(p).stem}', oracle_curve(p)) for p in a.oracle] + \
             [(f'reaver_nb default, {Path(p).name}', our_curve(p)) for p in a.ours]
    marks = list(range(a.every, 20 * a.every + 1, a.every))
    last = max((c[-1][0] for _, c in curves if c), default=0)
    marks = [m for m in marks if m <= last + 50_000]
    print(f"{'curve':52s}" + ''.join(f'{m // 1000:>7d}k' for m in marks) + '   final (frames)')
    for name, c in curves:
        cells = ''.join(f'{v:8.2f}' if (v := at(c, m)) is not None else f'{"-":>8s}' for m in marks)
        print(f'{name[:52]:52s}{cells}   {c[-1][1]:.2f} ({c[-1][0]:,})' if c else f'{name}: no rows')
    if real: print(f"{'Reaver README log, real map (8af7b05)':52s}" + ''.join(
        f'{v:8.2f}' if (v := next((r for f, r in real if abs(f - m) < 10_000), None)) is not None else f'{"":8s}'
        for m in marks))
    if a.out:
        import matplotlib; matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for name, c in curves:
            ax.plot([f for f, _ in c], [r for _, r in c], label=name,
                    color='tab:red' if name.startswith('Reaver') else 'tab:blue', alpha=0.8, lw=1.2)
        if real: ax.plot([f for f, _ in real], [r for _, r in real], 'k*', ms=10, label="Reaver's README log, real map")
        ax.set_xlabel('frames (agent steps, all envs)'); ax.set_ylabel('mean return, last 100 episodes')
        ax.set_title(a.title); ax.grid(alpha=0.3); ax.legend(fontsize=7, loc='center right')
        fig.tight_layout(); fig.savefig(a.out, dpi=100)
        print(f'wrote {a.out}')


if __name__ == '__main__':
    sys.exit(main())
