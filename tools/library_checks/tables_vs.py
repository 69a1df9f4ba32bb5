"""reaver compare's table (results.Comparison) as ours, tabulate and rich print it in 80 columns (one row carries an
imported run's name with a terminal escape sequence), and what importing each costs. Needs tabulate and rich."""
import io, subprocess, sys, time
from reaver_nb.results import Comparison

rows = [dict(map='MoveToBeacon', env='jax:MoveToBeacon', agent='a2c', runs=3, seeds=3, frames='2,000,000',
             checkpoint='ckpt_0002000000.msgpack', tested='here', ours='24.6 (2.1)', Reaver='26.3 (0.5) [24, 27]',
             SC2LE='26 (-)', ReDRL='27 (-)', GrandMaster='28 (-)', verdict='below Reaver (94% of its score)'),
        dict(map='CollectMineralShards', env='jax:CollectMineralShards', agent='ppo', runs=2, seeds=2,
             frames='10,000,000', checkpoint='ckpt_0010000000.msgpack', tested='sender', ours='101 (7)',
             Reaver='102.8 (10.8) [81, 135]', SC2LE='103 (-)', ReDRL='196 (-)', GrandMaster='177 (-)',
             verdict='matches Reaver'),
        dict(map='Evil', env='jax:MoveToBeacon', agent='a2c\x1b[2J[bold]x', runs=1, seeds=1)]   # an imported run's name
t = Comparison(rows)
cells = [list(t.columns)] + [[str(r.get(c, '–')) for c in t.columns] for r in rows]

def show(name, text):
    lines = text.rstrip('\n').splitlines()
    print(f"--- {name}: {len(lines)} lines, widest {max(map(len, lines))} columns, escape sequences left in: "
          f"{chr(27) in text}"); print(text.rstrip('\n'))

show('ours, 80 columns', t.text(80))
from tabulate import tabulate
show('tabulate (simple), 80 columns (it has no width)', tabulate(cells[1:], cells[0], tablefmt='simple'))
from rich.console import Console
from rich.table import Table as RTable
buf = io.StringIO(); c = Console(file=buf, width=80, force_terminal=False, color_system=None)
rt = RTable(*t.columns)
for r in cells[1:]: rt.add_row(*r)
c.print(rt); show('rich, 80 columns', buf.getvalue())

for mod in ('reaver_nb.results', 'tabulate', 'rich.table, rich.console'):
    ts = []
    for _ in range(5):
        t0 = time.perf_counter(); subprocess.run([sys.executable, '-c', f'import {mod}'], check=True); ts.append(time.perf_counter() - t0)
    print(f"python -c 'import {mod}': best of 5 {min(ts) * 1000:.0f} ms")
t0 = time.perf_counter(); subprocess.run([sys.executable, '-c', 'pass'], check=True); print(f"python -c pass: {(time.perf_counter() - t0) * 1000:.0f} ms")
