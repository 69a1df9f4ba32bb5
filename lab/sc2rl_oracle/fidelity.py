#!/usr/bin/env python
"""The judge's verdict: SC2-RL's A2C on the JAX mini-games (run_judge.py's output) next to its real-game logs (read
from a checkout), per map.

    python lab/sc2rl_oracle/fidelity.py --checkout $SC2RL --runs $OUT/judge [--out $OUT/fidelity]

`--runs` holds run_judge.py output folders (`<Map>_s<seed>/`, each with `run_info.json` and SC2-RL's own
`<Map>/Logging/<ID>.txt`). Writes `fidelity.md` (one table: per map, the real runs' and the simulation's score at the
logged steps both have, their plateau, and the logged steps to half and to 90% of the *real* plateau; in logged steps
and frames) and `<Map>.png` (real runs and simulated seeds on one axis, in logged steps and in frames).
"""
from __future__ import annotations
import argparse, json, math, sys, tempfile
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sc2rl_runs as R  # noqa: E402
from real_curves import first_crossing, load_log, runs_for  # noqa: E402


def sim_runs(runs: Path, m: str) -> list[tuple[str, np.ndarray, int, dict]]:
    "(label, (n, 2) curve of logged step and score, frames per logged step, run_info) of the judge's runs of `m`."
    out = []
    for d in sorted(runs.glob(f'{m}_s*')):
        info_p = d / 'run_info.json'   # written when a run ends; a run still going counts as its config says
        info = (json.loads(info_p.read_text()) if info_p.exists() else
                dict(seed=d.name.rsplit('_s', 1)[1], frames_per_logged_step=R.A2C_RUNS[m]['procs'] or 16, status='running'))
        logs = sorted((d / m / 'Logging').glob('*.txt'))
        if not logs or not [l for l in logs[0].read_text().splitlines() if l and not l.startswith('#')]: continue
        curve = np.loadtxt(logs[0], delimiter=',', comments='#', ndmin=2)   # (no header when the first test is not the first interval)
        label = f"sim s{info['seed']}" + (' (running)' if info.get('status') == 'running' else '')
        out.append((label, curve, int(info['frames_per_logged_step']), info))
    return out


def at(curve: np.ndarray, step: float) -> float:
    "The score logged at exactly `step`, or NaN."
    hit = np.nonzero(curve[:, 0] == step)[0]
    return float(curve[hit[0], 1]) if len(hit) else math.nan


def fmt(x, nd=1): return '—' if x is None or (isinstance(x, float) and math.isnan(x)) else f'{x:,.{nd}f}'


def steps_label(s: float, fpls: int, last: float) -> str:
    if math.isnan(s): return f'not by {int(last):,}'
    return f'{int(s):,} ({int(s * fpls):,} fr)'


def report(checkout: Path, runs: Path, out: Path, maps: list[str]) -> str:
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    lines = ['| map | logged step | real runs (mean; each) | simulation (mean; each) | real plateau | real: steps to half / 90% | '
             'simulation: steps to half / 90% of the real plateau | frames per logged step (real; sim) |',
             '|---|---|---|---|---|---|---|---|']
    for m in maps:
        real = [(i, load_log(checkout, m, i), p or 16) for i, kind, p, _ in runs_for(m, False, False, {})]
        sims = sim_runs(runs, m)
        plateau = float(np.mean([c[-10:, 1].mean() for _, c, _ in real]))
        if not sims:   # the map's real row still belongs in the table: say that the simulation was not run
            fr = real[0][2]
            rh = [first_crossing(c[:, 0], c[:, 1], 0.5 * plateau) for _, c, _ in real]
            r9 = [first_crossing(c[:, 0], c[:, 1], 0.9 * plateau) for _, c, _ in real]
            med = lambda v: float(np.nanmedian(v)) if not all(math.isnan(x) for x in v) else math.nan
            last = real[0][1][-1, 0]
            reach = ('— (the plateau is about 0)' if plateau < 1 else
                     f'{steps_label(med(rh), fr, last)} / {steps_label(med(r9), fr, last)}')
            procs = R.A2C_RUNS[m]['procs'] or 'unknown (16 assumed)'
            lines.append(f'| {m} | — | {len(real)} run(s) | not run | {fmt(plateau)} | {reach} | — | {procs}; — |')
            continue
        common = sorted(set().union(*[set(c[:, 0]) for _, c, _, _ in sims]) & set().union(*[set(c[:, 0]) for _, c, _ in real]))
        fr = real[0][2]; fs = sims[0][2]
        for k, step in enumerate(common):
            rv = [at(c, step) for _, c, _ in real]; sv = [at(c, step) for _, c, _, _ in sims]
            rv_ok = [v for v in rv if not math.isnan(v)]
            head = (f'| {m} | {int(step):,} | ' if k == 0 else f'| | {int(step):,} | ')
            tail = ''
            if k == 0:
                rh = [first_crossing(c[:, 0], c[:, 1], 0.5 * plateau) for _, c, _ in real]
                r9 = [first_crossing(c[:, 0], c[:, 1], 0.9 * plateau) for _, c, _ in real]
                sh = [first_crossing(c[:, 0], c[:, 1], 0.5 * plateau) for _, c, _, _ in sims]
                s9 = [first_crossing(c[:, 0], c[:, 1], 0.9 * plateau) for _, c, _, _ in sims]
                lasts = [c[-1, 0] for _, c, _, _ in sims]   # each simulated seed's last logged step
                med = lambda v: float(np.nanmedian(v)) if not all(math.isnan(x) for x in v) else math.nan
                tail = (f'{fmt(plateau)} | {steps_label(med(rh), fr, 0)} / {steps_label(med(r9), fr, 0)} | '
                        f'{"; ".join(steps_label(a, fs, l) + " / " + steps_label(b, fs, l) for a, b, l in zip(sh, s9, lasts))} | '
                        f'{fr}; {fs} |')
            else: tail = '| | | |'
            lines.append(head + f'{fmt(np.mean(rv_ok) if rv_ok else math.nan)}; {", ".join(fmt(v) for v in rv)} | '
                         f'{fmt(np.nanmean(sv))}; {", ".join(fmt(v) for v in sv)} | ' + tail)
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), layout='constrained')
        for ax, unit in zip(axes, ('logged steps', 'frames')):
            for i, c, p in real:
                ax.plot(c[:, 0] * (p if unit == 'frames' else 1), c[:, 1], color='0.6', lw=1, label='real game' if i == real[0][0] else None)
            for label, c, p, _ in sims:
                ax.plot(c[:, 0] * (p if unit == 'frames' else 1), c[:, 1], marker='o', lw=2, label=label)
            ax.set_xlabel(unit); ax.set_ylabel('test score (5 episodes)'); ax.set_title(f'{m}: SC2-RL A2C, real vs simulation')
            last = max(c[-1, 0] for _, c, _, _ in sims) * (fs if unit == 'frames' else 1)
            ax.set_xlim(0, last * 1.6); ax.legend(fontsize=7)
        fig.savefig(out / f'{m}.png', dpi=110); plt.close(fig)
    text = '\n'.join(lines) + '\n'
    (out / 'fidelity.md').write_text(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--checkout', required=True, type=Path)
    ap.add_argument('--runs', required=True, type=Path, help="run_judge.py's output folders")
    ap.add_argument('--out', type=Path, default=Path(tempfile.gettempdir()) / 'sc2rl_fidelity')
    ap.add_argument('--maps', nargs='*', default=list(R.A2C_RUNS))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    print(report(a.checkout, a.runs, a.out, a.maps))


if __name__ == '__main__':
    main()
