#!/usr/bin/env python
"""The entropy fingerprint before any learning (issue 58): SC2-RL's function entropy at initialisation, over states its
own initial policy visits, for observation variants of the simulation; forward passes only, no training.

    $JUDGE_VENV/bin/python lab/sc2rl_oracle/fingerprint.py [--inits 10] [--steps 100] [--map MoveToBeacon]

For each variant and each of `--inits` initialisations (torch's default init, fast_judge.init_params), 16 envs play
`--steps` logged steps with that initial policy (fast_judge's env and processing, the variant applied) and the mean
entropy of the function distribution over those states is taken, as SC2-RL logs it per update
(`losses['entropies']`, entropy.py). The real runs' first 1,500 logged steps read 2.15-2.16 (entropy.py, five final
MoveToBeacon runs); the torch judge on the simulation read 2.18 (2.06 for seed 0). Also printed: the share of states
in which no unit is selected (4 functions offered, not 9).
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path
import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))


def variants():
    import jax.numpy as jnp
    from reaver_nb.envs.sim import MiniGameOptions
    return {
        'default': (MiniGameOptions(), {}),
        'beacon_on_top=False': (MiniGameOptions(beacon_on_top=False), {}),
        'probe select_point on empty ground deselects': (MiniGameOptions(), {}, 'point-empty-deselects'),
        'probe select_rect on empty ground deselects': (MiniGameOptions(), {}, 'rect-empty-deselects'),
        'probe select_point on the beacon selects it': (MiniGameOptions(), {}, 'point-selects-beacon'),
        'probe select_rect on the beacon alone selects it': (MiniGameOptions(), {}, 'rect-selects-beacon'),
        'probe density_aa = 4 x density': (MiniGameOptions(), {'unit_density_aa': lambda L: 4 * L('unit_density')}),
        'probe density_aa = 8 x density': (MiniGameOptions(), {'unit_density_aa': lambda L: 8 * L('unit_density')}),
        "probe beacon pixels' hit points 255": (MiniGameOptions(), {
            'unit_hit_points': lambda L: jnp.where(L('unit_type') == 317, 255, L('unit_hit_points')),
            'unit_hit_points_ratio': lambda L: jnp.where(L('unit_type') == 317, 255, L('unit_hit_points_ratio'))}),
    }


def main(argv=None):
    import jax, jax.numpy as jnp
    import fast_judge as F
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--map', default='MoveToBeacon'); ap.add_argument('--inits', type=int, default=10)
    ap.add_argument('--steps', type=int, default=100); ap.add_argument('--only', nargs='*')
    a = ap.parse_args(argv)
    table = F.make_table(16)
    rows = []
    for name, (sim, fix, *probe) in variants().items():
        if a.only and name not in a.only: continue
        env = F.BatchedGame(a.map, 16, table, sim, game_cls=F.PROBES[probe[0]][0] if probe else None, screen_fix=fix)
        judge = F.Judge.__new__(F.Judge); judge.table, judge.env = table, env
        act = jax.jit(lambda p, k, o: F.Judge.act(judge, p, k, o))
        step = jax.jit(env.step); reset = jax.jit(env.reset)
        ents, unsel = [], []
        for i in range(a.inits):
            key = jax.random.PRNGKey(1000 + i)
            kp, ke, key = jax.random.split(key, 3)
            p = F.init_params(kp, table)
            keys, states, view = reset(jax.random.split(ke, 16))
            obs = env.process(view)
            e, u = [], []
            for t in range(a.steps):
                key, k = jax.random.split(key)
                act_, sp, ct, ne = act(p, k, obs)
                e.append(float(-ne.mean())); u.append(float((obs['unavailable'].sum(1) > 11).mean()))
                keys, states, obs, *_ = step(keys, states, env.encode(act_, sp, ct))
            ents.append(np.mean(e)); unsel.append(np.mean(u))
        rows.append((name, np.mean(ents), np.std(ents), np.min(ents), np.max(ents), np.mean(unsel)))
        print(f'{name:40s} entropy {np.mean(ents):.3f} +- {np.std(ents):.3f} (inits {np.min(ents):.3f}-{np.max(ents):.3f}); '
              f'no unit selected in {100 * np.mean(unsel):.1f}% of states', flush=True)
    return rows


if __name__ == '__main__':
    main()
