#!/usr/bin/env python
"""How much a click on the beacon is worth to SC2-RL's A2C before it has learnt anything (issue 58): a forward-only
diagnostic that ranks simulation settings and probes by the learning signal they give the spatial head.

    $JUDGE_VENV/bin/python lab/sc2rl_oracle/click_signal.py --inits 3 --updates 20 \
        --variant default --variant 'faithful:beacon_on_top=True,pixel_footprint=True' \
        --variant 'click-pays@faithful' ...

The fast judge's initial network (torch's default init, seeds 0..inits-1) plays `updates` x 60 logged steps of 16
envs, never learning. Every `Move_screen` / `Attack_screen` step of a selected marine is a *click*; a click is *on
the beacon* when `player_relative` shows the beacon (3) at the clicked pixel of the observation it was chosen on.
For each click its n-step return is taken as SC2-RL's loss takes it (n = 20, gamma 0.99, cut at the episode's end;
no bootstrap: the critic knows nothing yet). Printed per variant:

- `p_on`: the share of all logged env steps that are clicks on the beacon;
- `G_on`, `G_off`: the mean 20-step return after a click on / off the beacon; `delta = G_on - G_off`;
- `signal = p_on * delta`: the mean policy-gradient push, per env step, towards the beacon's pixels on the one
  weight they share (what the spatial head must learn first);
- `z`: `delta` over its standard error (how sure the push is in these samples).

`click-pays` learns where to click at the real game's pace (section 6 of `runs/2026-12-07_issue58.md`), the
default about 2-4 times later: a candidate that gives the default's signal cannot explain the gap through the click's
value; one with click-pays' signal might. A diagnostic, not a judge: only learning runs (`fast_judge.py`) decide.
A variant: `NAME[:field=value,...]` (MiniGameOptions fields, and `density_aa_x=K`: the unsimulated `unit_density_aa`
read as K x `unit_density` instead of zeros, a probe of the input) or `PROBE@NAME` (a fast-judge probe on it).
"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))
import fast_judge as FJ  # noqa: E402

def _channel(layer: str, value: int) -> int:
    "The input channel of SC2-RL's processing that is 1 where the screen layer `layer` equals `value`."
    i = 0
    for name, kind, vals in FJ.SCREEN_PROC:
        if name == layer: return i + vals.index(value)
        i += len(vals) if kind == 'ohe' else 1
    raise KeyError(layer)


ON_BEACON = _channel('player_relative', 3)


def measure(sim_kw: dict, probe: str | None, inits: int, updates: int, res=16, n_envs=16):
    import jax
    from reaver_nb.envs.sim import MiniGameOptions
    sim_kw = dict(sim_kw)
    aa = float(sim_kw.pop('density_aa_x', 0))   # a probe of the input: unit_density_aa = aa x unit_density (else 0)
    sim = FJ._typed(MiniGameOptions(**sim_kw))
    judge = FJ.Judge('MoveToBeacon', res, 3e-4, 0.01, n_envs, 60, 5, sim, FJ.PROBES[probe][0] if probe else None)
    if aa: judge.env.screen_fix = {'unit_density_aa': lambda L: (aa * L('unit_density')).astype(L('unit_density').dtype)}
    t = judge.table
    clicks = [t.ids.index(331), t.ids.index(12)]            # Move_screen, Attack_screen
    sp_of = {i: t.spatial_names.index(f'{FJ.ACTION_NAMES[i]}/screen') for i in clicks}
    on, G_all, is_click, rew = [], [], [], []
    for s in range(inits):
        key = jax.random.PRNGKey(s)
        key, kp, ke = jax.random.split(key, 3)
        p = FJ.init_params(kp, t)
        keys, states, view = judge.env.reset(jax.random.split(ke, n_envs))
        obs = judge.env.process(view)
        recs = []
        for _ in range(updates * 60):
            key, keys, states, obs, rec = judge.act_step(p, key, keys, states, obs)
            a = np.asarray(rec['a'])
            px = np.where(a == clicks[0], np.asarray(rec['sp_idx'])[:, sp_of[clicks[0]]],
                          np.asarray(rec['sp_idx'])[:, sp_of[clicks[1]]])
            beacon = np.asarray(rec['spatial'][:, ON_BEACON]).reshape(n_envs, -1)
            recs.append(dict(click=np.isin(a, clicks), on=beacon[np.arange(n_envs), px] > 0,
                             r=np.asarray(rec['r']), done=np.asarray(rec['done'])))
        stack = {k: np.stack([x[k] for x in recs], 1) for k in recs[0]}
        G = np.asarray(FJ.n_step_targets(stack['r'], stack['done'], 0.99, 20)[1])   # SC2-RL's window, no bootstrap
        is_click.append(stack['click'].ravel()); on.append((stack['click'] & stack['on']).ravel())
        G_all.append(G.ravel()); rew.append(stack['r'].sum() / stack['done'].sum())
    click, on, G = np.concatenate(is_click), np.concatenate(on), np.concatenate(G_all)
    off = click & ~on
    d = G[on].mean() - G[off].mean()
    se = np.sqrt(G[on].var() / max(on.sum(), 1) + G[off].var() / max(off.sum(), 1))
    return dict(steps=int(click.size), clicks=int(click.sum()), p_on=float(on.mean()), G_on=float(G[on].mean()),
                G_off=float(G[off].mean()), delta=float(d), signal=float(on.mean() * d), z=float(d / se),
                score_per_episode=float(np.mean(rew)))


def parse_variant(v: str):
    probe = None
    if '@' in v: probe, v = v.split('@', 1)
    name, _, kv = v.partition(':')
    kw = dict(x.split('=', 1) for x in kv.split(',') if x)
    return name if not probe else f'{probe}@{name}', kw, probe


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--variant', action='append', required=True)
    ap.add_argument('--inits', type=int, default=3)
    ap.add_argument('--updates', type=int, default=20, help='60 logged steps of 16 envs each, per init')
    ap.add_argument('--out', type=Path)
    a = ap.parse_args(argv)
    rows = []
    for v in a.variant:
        name, kw, probe = parse_variant(v)
        m = measure(kw, probe, a.inits, a.updates)
        rows.append(dict(variant=name, sim=kw, probe=probe, **m))
        print(f"{name:40s} p_on {m['p_on']:.4f}  G_on {m['G_on']:.3f}  G_off {m['G_off']:.3f}  delta {m['delta']:+.3f} "
              f"(z {m['z']:+.1f})  signal {m['signal'] * 1e3:+.2f}e-3  clicks {m['clicks']} of {m['steps']}  "
              f"score/episode {m['score_per_episode']:.2f}", flush=True)
    if a.out: a.out.write_text(json.dumps(rows, indent=1))


if __name__ == '__main__':
    main()
