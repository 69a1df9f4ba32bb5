"""The results record and the text generated from it. Each number the README, the quickstart and the docs state lives
in one record: our runs and the simulation's calibration in `reaver_nb/data/results.csv`, published scores in
`reaver_nb/data/published_tables.csv` and `gym_reference.csv`, benchmark ratios in `docs/benchmarks.csv`, and how long
the example commands and the test command take in `docs/timings.csv`.

    python tools/results.py            # rewrite the marked regions of nbs/index.ipynb and colab/*.ipynb from the record
    python tools/results.py --check    # exit 1 if a marked region is stale or a stated number has no record

A marked region is `<!-- record:NAME -->...<!-- /record -->` in a markdown cell: NAME is `table:results`,
`table:benchmarks`, `table:examples` (the example commands with their times), `timing:KEY` (one measured time of
docs/timings.csv), or `KEY.FIELD` for one value of a results row (`mean`, `means`, `min`, `max`, `frames`, `time`,
`seeds`, `episodes`) or `pub:MAP:SOURCE` for a published mean. Outside marked regions, code spans and code blocks, the
user-facing text (README.md, the Colab notebooks' markdown, the shipped gin files' comments) may state no decimal
number and no duration in minutes: a number typed by hand is a number that will disagree with its record.
"""
import csv, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / 'reaver_nb' / 'data'
NOTEBOOKS = [ROOT / 'nbs' / 'index.ipynb', ROOT / 'nbs' / 'getting_started.ipynb', *sorted((ROOT / 'colab').glob('*.ipynb'))]


def _rows(path):
    with open(path) as f: return list(csv.DictReader(l for l in f if not l.startswith('#')))


def load() -> dict:
    runs = {r['key']: r for r in _rows(DATA / 'results.csv')}
    pub = {}
    for r in _rows(DATA / 'published_tables.csv'):
        if r['mean']: pub[r['map'], r['source']] = r['mean']
    gym = _rows(DATA / 'gym_reference.csv')
    timings = {r['key']: r for r in _rows(ROOT / 'docs' / 'timings.csv')}
    return dict(runs=runs, pub=pub, gym=gym, bench=_rows(ROOT / 'docs' / 'benchmarks.csv'), timings=timings)


def _nums(s): return [float(x) for x in s.split()] if s else []
def _f(x): return f'{x:.2f}'


def duration(seconds: float) -> str:
    s = int(round(seconds))
    if s < 120: return f'{s} s'
    return f'{s // 60} min {s % 60} s' if s % 60 else f'{s // 60} min'


def value(rec, name: str) -> str:
    "One marked value: KEY.FIELD of a results row, or pub:MAP:SOURCE."
    if name.startswith('pub:'):
        _, m, src = name.split(':'); return rec['pub'][m, src]
    key, field = name.rsplit('.', 1)
    r = rec['runs'][key]
    means, times = _nums(r['means']), _nums(r['train_s'])
    out = dict(mean=_f(means[0]) if len(means) == 1 else None, means=' / '.join(map(_f, means)),
               min=_f(min(means)) if means else None, max=_f(max(means)) if means else None,
               avg=_f(sum(means) / len(means)) if means else None,
               frames=' / '.join(f'{int(x):,}' for x in _nums(r['frames'])), episodes=r['episodes'],
               seeds=' / '.join(r['seeds'].split()),
               time=(duration(min(times)) if len(set(times)) == 1 else f'{duration(min(times))} – {duration(max(times))}')
               if times else None)[field]
    if out is None: raise KeyError(f'{name}: the row has no such value')
    return out


def published(rec, env: str) -> str:
    "The published scores (and our simulation's calibration) for an env, as the results table shows them."
    name = env.split(':', 1)[-1]
    parts = [f'{label} {rec["pub"][name, src]}' for src, label in (('reaver', 'Reaver'), ('sc2le', 'SC2LE'))
             if (name, src) in rec['pub']]
    out = ', '.join(parts) + (' (real map)' if parts else '')
    cal = [f'{r["label"]} {_f(_nums(r["means"])[0])}' for r in rec['runs'].values()
           if r['kind'] == 'calibration' and r['env'] == env]
    if cal: out += ('; ' if out else '') + ', '.join(cal) + ' here'
    gym = [g for g in rec['gym'] if g['env'].split('-v')[0] == name.split('-v')[0] and g['source'] == 'cleanrl']
    if gym: out = ', '.join(f'CleanRL {g["algo"].upper()} {g["mean"]} ({int(g["steps"]) // 1000}k, {g["env"]})' for g in gym)
    return out


def results_table(rec) -> str:
    head = ['| env | agent | seeds | env steps | train time | test return | published | command |',
            '|---|---|---|---|---|---|---|---|']
    rows = []
    for k, r in rec['runs'].items():
        if r['kind'] != 'run': continue
        means, stds = _nums(r['means']), _nums(r['stds'])
        ret = (f'{_f(means[0])} ± {_f(stds[0])}' if len(means) == 1 and stds else ' / '.join(map(_f, means)))
        if len(set(means)) == 1 and len(means) > 1: ret = f'{_f(means[0])} each'
        rows.append(f"| {r['env']} | {r['label']} | {' / '.join(r['seeds'].split())} | {value(rec, k + '.frames')} | "
                    f"{value(rec, k + '.time')} | {ret} ({r['episodes']} episodes) | {published(rec, r['env'])} | "
                    f"`{r['command']}` |")
    return '\n'.join(head + rows)


def bench_table(rec) -> str:
    return '\n'.join(['| what | ratio | script |', '|---|---|---|'] +
                     [f"| {b['what']} | {b['ratio']} | `{b['script']}` |" for b in rec['bench']])


def timing(rec, spec: str) -> str:
    "How long, from a `cpu`/`gpu` spec of docs/timings.csv (see its header)."
    how, _, key = spec.partition(':')
    if how == 'none': return key
    if how == 'measured':
        t = rec['timings'][key]
        return duration(float(t['seconds'])) + ('' if 'CPU' in t['machine'] else f" on {t['machine'].split(' (')[0]}")
    if how == 'results': return value(rec, key + '.time') + ' of training a seed'
    if how == 'estimate':
        key, frames = key.split(':')
        r = rec['runs'][key]
        fps = sum(_nums(r['frames'])) / sum(_nums(r['train_s']))
        return (f"**long**: about {round(int(frames) / fps / 3600)} h (estimated: {int(frames):,} frames at the "
                f"{fps:.0f} frames/s of the record's 30-minute {r['env']} run)")
    raise KeyError(f'{spec}: not a timing (measured:, results:, estimate: or none:)')


def examples_table(rec) -> str:
    head = ["| command | what it does | 2-core CPU | GPU (Colab's: not measured) |", '|---|---|---|---|']
    rows = [f"| `{t['command']}` | {t['what']} | {timing(rec, t['cpu'])} | {timing(rec, t['gpu'])} |"
            for t in rec['timings'].values() if t['kind'] == 'example']
    return '\n'.join(head + rows)


MARK = re.compile(r'<!-- record:([^ ]+) -->(.*?)<!-- /record -->', re.S)


def render(text: str, rec) -> str:
    def fill(m):
        name = m.group(1)
        body = {'table:results': lambda: '\n' + results_table(rec) + '\n',
                'table:benchmarks': lambda: '\n' + bench_table(rec) + '\n',
                'table:examples': lambda: '\n' + examples_table(rec) + '\n'}.get(
            name, lambda: timing(rec, 'measured:' + name[7:]) if name.startswith('timing:') else value(rec, name))()
        return f'<!-- record:{name} -->{body}<!-- /record -->'
    return MARK.sub(fill, text)


def _markdown_cells(nb_path):
    nb = json.loads(nb_path.read_text())
    return nb, [c for c in nb['cells'] if c['cell_type'] == 'markdown']


def write(rec) -> list:
    changed = []
    for p in NOTEBOOKS:
        nb, cells = _markdown_cells(p)
        dirty = False
        for c in cells:
            old = ''.join(c['source']); new = render(old, rec)
            if new != old: c['source'] = new.splitlines(keepends=True); dirty = True
        if dirty: p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n'); changed.append(p)
    return changed


NUMBER = re.compile(r'(?<![\w.])[-−]?\d+\.\d+(?![\w.])|\b\d+ min\b')


def stray_numbers(text: str) -> list:
    "Decimal numbers and minute durations in `text` outside marked regions, code spans, code blocks and links."
    text = MARK.sub(' ', text)
    text = re.sub(r'```.*?```', ' ', text, flags=re.S)
    text = re.sub(r'`[^`\n]*`', ' ', text)
    text = re.sub(r'\]\([^)]*\)|https?://\S+|<[^>]+>', ' ', text)
    text = re.sub(r'\b(Python|pysc2|protobuf|jax|flax|IPython|ipywidgets|game|version|StarCraft II|Linux)\s+[\d.–-]+', ' ', text)
    return NUMBER.findall(text)


def check(rec) -> list:
    "Problems: stale marked regions, and numbers stated outside them."
    problems = []
    for p in NOTEBOOKS:
        _, cells = _markdown_cells(p)
        for c in cells:
            s = ''.join(c['source'])
            if render(s, rec) != s: problems.append(f'{p.relative_to(ROOT)}: a marked region differs from the record '
                                                    '(run python tools/results.py)')
            if stray := stray_numbers(s): problems.append(f'{p.relative_to(ROOT)}: numbers without a record: {stray}')
    readme = (ROOT / 'README.md').read_text()
    if stray := stray_numbers(readme): problems.append(f'README.md: numbers without a record: {stray}')
    for g in sorted((ROOT / 'reaver_nb' / 'configs').rglob('*.gin')):
        comments = '\n'.join(l.split('#', 1)[1] for l in g.read_text().splitlines() if '#' in l)
        if stray := stray_numbers(comments):
            problems.append(f'{g.relative_to(ROOT)}: numbers in comments (results belong in the record): {stray}')
    return problems


if __name__ == '__main__':
    rec = load()
    if '--check' in sys.argv:
        problems = check(rec)
        for p in problems: print(p)
        if problems: sys.exit(1)
        print('every stated number is in the record, and every marked region matches it')
    else:
        for p in write(rec): print('rewrote', p.relative_to(ROOT))
