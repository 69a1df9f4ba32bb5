#!/usr/bin/env python
"""Real MoveToBeacon steps decoded from SC2-RL's inspection figures, and their replay on the simulation (issue 58).

    # decode (reads the notebooks of a checkout; writes our data file of decoded numbers, no image, no code)
    python lab/sc2rl_oracle/trajectories.py decode --checkout $SC2RL --out lab/sc2rl_oracle/data/real_steps_part19.csv
    # replay on the simulation (the judge venv or any venv with reaver_nb)
    python lab/sc2rl_oracle/trajectories.py replay --data lab/sc2rl_oracle/data/real_steps_part19.csv

**Source**: `Notebooks/Part19_Final_Inspection.ipynb` cell 35 of nicoladainese96/SC2-RL at the pinned commit: 50
consecutive steps of one real MoveToBeacon test episode (game 4.10, 32x32 screen and minimap, run LCLR's checkpoint
at 12,000 steps, GeneralA2C). Per step the cell prints the top-5 functions and the chosen one (text output) and shows
two figures: the screen and the minimap as `SC_Utils/render.py:plot_screen` paints them (visible area green, not
visible black, `player_relative` 3 (neutral) blue, then `player_relative` 1 (own) yellow, then the click white),
and the policy's spatial maps. The decoder samples the centre of each of the 32x32 cells of the screen's imshow
(the axes' box found as the figure's non-white block) and classifies its colour. Because the marine is painted after
the beacon, a step where no yellow cell is found is a step where the layer itself has no own unit; a white cell
hides what was under it (the click's own cell is recorded as unknown).

Columns: `step`, `function` (the chosen function's name, text), `click_x`, `click_y` (the white cell; -1 none),
`marine` (the yellow cells, `x:y` joined by `;`), `beacon` (the blue cells), `visible` (count of the green and
other non-black cells), `marine_x`, `marine_y` (mean of the yellow cells; empty when none), `beacon_x`,
`beacon_y` (mean of the blue cells, the click's cell counted when it lies inside the disc's other cells' box).
"""
from __future__ import annotations
import argparse, base64, csv, io, json, math, re, sys
from pathlib import Path

import numpy as np

SOURCE = ('nicoladainese96/SC2-RL@20eaff007473c74c284263735c2fa96491b642bd Notebooks/Part19_Final_Inspection.ipynb '
          'cell 35 (MoveToBeacon, 32x32, run LCLR checkpoint 12000)')
RES = 32
COLORS = dict(marine=(255, 255, 0), beacon=(10, 10, 100), click=(250, 250, 250), visible=(10, 100, 10),
              dark=(0, 0, 0), last=(255, 165, 0), enemy=(200, 10, 10), fog=(127, 153, 127))


def _png(o):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(o['data']['image/png']))).convert('RGB')).astype(int)


# the older plot of Part8 and Part10 (`Utils/inspection_plots.py:plot_state`): marine red, its last position dark
# red, beacon blue, the click yellow, the last click orange; painted last position, beacon, marine, click
OLD_COLORS = dict(marine=(200, 10, 10), last=(100, 10, 10), beacon=(10, 10, 100), click=(255, 255, 0),
                  last_click=(255, 165, 0), visible=(10, 100, 10), dark=(0, 0, 0))


def screen_cells(im, res=RES, colors=COLORS):
    "The left axes' res x res grid of the figure `im`, each cell the name of its nearest palette colour."
    H, W, _ = im.shape
    nonwhite = im.sum(-1) < 750
    ys, xs = np.nonzero(nonwhite[:, :W // 2])
    y0, y1, x0, x1 = ys.min(), ys.max(), xs.min(), xs.max()
    names, pal = list(colors), np.array(list(colors.values()))
    out = np.empty((res, res), object)
    for r in range(res):
        for c in range(res):
            y = int(round(y0 + (r + 0.5) * (y1 - y0 + 1) / res)); x = int(round(x0 + (c + 0.5) * (x1 - x0 + 1) / res))
            px = im[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).mean(0)
            out[r, c] = names[int(np.argmin(((pal - px) ** 2).sum(1)))]
    return out


OLD_FUNCTIONS = {0: 'no_op', 1: 'select_army', 2: 'Move_screen'}   # Part8/Part10's action space (text: "Action selected: [k]")
SEQUENCES = {   # name: (notebook, cell, screen resolution, palette)
    'part19': ('Part19_Final_Inspection.ipynb', 35, 32, COLORS),
    'part8': ('Part8_inspecting_episodes.ipynb', 15, 64, OLD_COLORS),
    'part10': ('Part10_REINFORCE_inspection.ipynb', 4, 16, OLD_COLORS),
}


def decode(checkout: Path, name='part19'):
    nb, cell, res, colors = SEQUENCES[name]
    d = json.load(open(checkout / 'Notebooks' / nb))
    outs = d['cells'][cell]['outputs']
    RES = res
    rows, step, func, fig_seen, point = [], None, None, False, None
    for o in outs:
        if o['output_type'] == 'stream':
            txt = ''.join(o['text'])
            m = re.search(r'Step (\d+)', txt)
            if m: step, fig_seen = int(m.group(1)), False
            m = re.search(r'Action chosen:?\s+(\S+)', txt)
            func = m.group(1) if m else None
            m = re.search(r'Action selected:\s+\[(\d+)\]', txt)
            if m: func = OLD_FUNCTIONS[int(m.group(1))]
            m = re.search(r'POINT: \(x,y\)=\((\d+),\s*(\d+)\)', txt)
            point = (int(m.group(1)), int(m.group(2))) if m else None
        elif o['output_type'] == 'display_data' and 'image/png' in o.get('data', {}) and not fig_seen:
            fig_seen = True          # the first figure of a step is the screen (+ minimap); the second the policy maps
            cells = screen_cells(_png(o), res, colors)
            pick = lambda k: [(c, r) for r in range(RES) for c in range(RES) if cells[r, c] == k]
            mar, bea, clk = pick('marine'), pick('beacon'), pick('click')
            vis = int(sum(cells[r, c] != 'dark' for r in range(RES) for c in range(RES)))
            if not clk and func == 'Move_screen' and point is not None: clk = [point]   # Part8/10: the printed point
            row = dict(step=step, function=func, click_x=clk[0][0] if clk else -1, click_y=clk[0][1] if clk else -1,
                       marine=';'.join(f'{x}:{y}' for x, y in mar), beacon=';'.join(f'{x}:{y}' for x, y in bea),
                       visible=vis, n_marine=len(mar), n_beacon=len(bea))
            row['marine_x'], row['marine_y'] = (np.mean([p[0] for p in mar]), np.mean([p[1] for p in mar])) if mar else ('', '')
            bb = list(bea)
            if clk and bea and min(x for x, _ in bea) <= clk[0][0] <= max(x for x, _ in bea) and \
                    min(y for _, y in bea) <= clk[0][1] <= max(y for _, y in bea):
                bb.append(clk[0])
            row['beacon_x'], row['beacon_y'] = (np.mean([p[0] for p in bb]), np.mean([p[1] for p in bb])) if bb else ('', '')
            row['res'] = res
            rows.append(row)
    return rows


def write(rows, out: Path, name='part19'):
    out.parent.mkdir(parents=True, exist_ok=True)
    cols = list(rows[0])
    nb, cell, res, _ = SEQUENCES[name]
    src = SOURCE if name == 'part19' else (f'nicoladainese96/SC2-RL@20eaff007473c74c284263735c2fa96491b642bd '
                                           f'Notebooks/{nb} cell {cell} (MoveToBeacon, {res}x{res})')
    with open(out, 'w', newline='') as f:
        f.write(f'# source: {src}; decoded by lab/sc2rl_oracle/trajectories.py (cell centres of the screen imshow)\n')
        w = csv.DictWriter(f, fieldnames=cols); w.writeheader()
        for r in rows: w.writerow({k: (f'{v:.2f}' if isinstance(v, float) else v) for k, v in r.items()})


def read(path: Path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith('#')]
    return list(csv.DictReader(lines))


# --- replay on the simulation -------------------------------------------------------------------------------------

FUNC_IDS = dict(no_op=0, select_army=7, Attack_screen=12, Move_screen=331, Patrol_screen=333, Smart_screen=451,
                HoldPosition_quick=274, Stop_quick=453, select_point=2, select_rect=3)


def replay(rows, sim=None, queued=0, probe=None):
    """The decoded episode on the simulated MoveToBeacon (32x32): the marine and the beacon placed where the first
    figure shows them (cell centres), then each step's function with its click; when the simulation pays a beacon the
    new beacon is put where the real figures show the next one (the respawn is random in both), so a beacon the
    simulation takes earlier than the game waits there for the marine. Per step: the marine
    cell in the simulation and in the real figure, whether each shows a marine, beacon taken."""
    import jax, jax.numpy as jnp
    from reaver_nb.envs.sim import MiniGameOptions
    from reaver_nb.envs.sim.game import SC2Options, function_call
    from reaver_nb.envs.sim.maps import MoveToBeacon
    from reaver_nb.envs.sim.engine import SCREEN_UNITS
    RES = int(rows[0].get('res') or 32)
    cls = MoveToBeacon
    if probe:   # a fast-judge probe (never a default)
        sys.path.insert(0, str(Path(__file__).resolve().parent)); import fast_judge
        cls = fast_judge.PROBES[probe][0]
    g = cls(SC2Options(screen_size=RES, minimap_size=RES, functions='all',
                       screen_features=('player_relative', 'visibility_map', 'selected', 'unit_density'),
                       minimap_features=('player_relative',)), sim or MiniGameOptions())
    px = SCREEN_UNITS / RES
    step = jax.jit(g.step)
    _, s = jax.jit(g.reset)(jax.random.PRNGKey(0))
    cell = lambda x, y: jnp.array([(float(x) + 0.5) * px, (float(y) + 0.5) * px], jnp.float32)
    r0 = rows[0]
    u = s.units
    pos = u.pos.at[0].set(cell(r0['marine_x'], r0['marine_y'])).at[1].set(cell(r0['beacon_x'], r0['beacon_y']))
    s = s.replace(units=u.replace(pos=pos))
    names = list(g.obs_spec.names) if hasattr(g.obs_spec, 'names') else [sp.name for sp in g.obs_spec]
    i_pr, i_d = names.index('screen/player_relative'), names.index('screen/unit_density')
    # Part8/Part10's plots draw as the marine the state channel unit_density - (player_relative == 3)
    # (SC2-RL Utils/train_batched_A2C.py:99-114), Part19's player_relative == 1
    old_style = RES != 32
    out, key = [], jax.random.PRNGKey(1)
    # the real beacons in order (a new one where the centre moves by more than 2 cells)
    seq = []
    for r in rows:
        b = (float(r['beacon_x']), float(r['beacon_y']))
        if not seq or math.dist(seq[-1], b) > 2: seq.append(b)
    taken_n = 0
    for t, r in enumerate(rows[:-1]):
        f = FUNC_IDS.get(r['function'], 0)
        x, y = int(r['click_x']), int(r['click_y'])
        args = dict(queued=queued)
        if x >= 0: args['screen'] = y * RES + x
        if f == 7: args = dict(select_add=0)
        a = function_call(g, f, **args)
        key, k = jax.random.split(key)
        obs, s2, rew, done, _ = step(k, s, a)
        taken = float(rew) > 0
        if taken:                   # put the new beacon where the real game's next one appears
            taken_n += 1
            if taken_n < len(seq):
                u = s2.units
                s2 = s2.replace(units=u.replace(pos=u.pos.at[1].set(cell(*seq[taken_n]))))
                obs = g.observe(s2)
        pr = np.asarray(obs[i_pr])
        own = (np.asarray(obs[i_d]) - (pr == 3)) != 0 if old_style else pr == 1
        mar = np.argwhere(own); bea = np.argwhere(pr == 3)
        nxt = rows[t + 1]
        sim_m = (mar[:, 1].mean(), mar[:, 0].mean()) if len(mar) else None
        real_m = (float(nxt['marine_x']), float(nxt['marine_y'])) if nxt['marine_x'] != '' else None
        true_m = np.asarray(s2.units.pos[0]) / px - 0.5
        out.append(dict(step=t + 1, function=r['function'], click=(x, y), sim_marine_cells=len(mar),
                        real_marine_cells=int(nxt['n_marine']), sim_beacon_cells=len(bea), real_beacon_cells=int(nxt['n_beacon']),
                        sim_taken=taken, real_beacon_moved=_moved(rows[t], nxt),
                        err_cells=(math.dist(true_m, real_m) if real_m else math.nan), sim_marine=sim_m, real_marine=real_m))
        s = s2
    return out


def _moved(a, b):
    if a['beacon_x'] == '' or b['beacon_x'] == '': return False
    return math.dist((float(a['beacon_x']), float(a['beacon_y'])), (float(b['beacon_x']), float(b['beacon_y']))) > 2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    d = sub.add_parser('decode'); d.add_argument('--checkout', type=Path, required=True); d.add_argument('--out', type=Path, required=True)
    d.add_argument('--sequence', default='part19', choices=list(SEQUENCES))
    r = sub.add_parser('replay'); r.add_argument('--data', type=Path, required=True)
    r.add_argument('--sim', nargs='*', default=[]); r.add_argument('--queued', type=int, default=0)
    sys.path.insert(0, str(Path(__file__).resolve().parent)); from fast_judge import PROBE_NAMES
    r.add_argument('--probe', choices=PROBE_NAMES, help="a fast-judge probe (e.g. point-selects-beacon)")
    a = ap.parse_args(argv)
    if a.cmd == 'decode':
        rows = decode(a.checkout, a.sequence)
        write(rows, a.out, a.sequence)
        for x in rows: print(x['step'], x['function'], (x['click_x'], x['click_y']), 'marine', x['n_marine'], x['marine'],
                             'beacon', x['n_beacon'], x['beacon_x'], x['beacon_y'], 'visible', x['visible'])
    else:
        from reaver_nb.envs.sim import MiniGameOptions
        kw = {}
        for kv in a.sim:
            k, v = kv.split('='); kw[k] = v.lower() in ('1', 'true') if v.lower() in ('1', '0', 'true', 'false') else v
        res = replay(read(a.data), MiniGameOptions(**kw), a.queued, a.probe)
        for x in res: print(x)
        errs = [x['err_cells'] for x in res if not math.isnan(x['err_cells'])]
        print(f"mean marine position error {np.mean(errs):.2f} cells over {len(errs)} steps with a real marine; "
              f"real beacon moves at steps {[x['step'] for x in res if x['real_beacon_moved']]}; "
              f"sim takes at {[x['step'] for x in res if x['sim_taken']]}; real steps without a marine cell "
              f"{[x['step'] for x in res if x['real_marine_cells'] == 0]}; sim steps without one "
              f"{[x['step'] for x in res if x['sim_marine_cells'] == 0]}")
        return res


if __name__ == '__main__':
    main()
