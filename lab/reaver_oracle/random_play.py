"""Uniformly random play and scripted play on the JAX MoveToBeacon with candidate mechanics patched in (candidates.py):
what each candidate does to the untrained agent's reward, next to SC2LE's random policy (mean 1, max 6).

    python lab/reaver_oracle/random_play.py [--episodes 200]      # reaver_nb's own venv is enough
"""
import argparse, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, jax
import reaver_nb.envs.sim as mg
import candidates
ap = argparse.ArgumentParser()
ap.add_argument('--episodes', type=int, default=200)
a = ap.parse_args()
mg.MoveToBeacon.reach = 1.25   # the faithful variant (issue 28): the defaults since, beacon drawn at 1.875
base = {n: getattr(mg, n) for n in ('_select_point', '_select_rect')}; hp = float(mg.KIND['max_hp'][mg.BEACON])
for combo in ([], ['deselect'], ['beacon_select'], ['deselect', 'beacon_select'], ['beacon_hp']):
    for n, f in base.items(): setattr(mg, n, f)
    mg.KIND['max_hp'][mg.BEACON] = hp
    candidates.apply(combo)
    for follows in (False, True):
        g = mg.MoveToBeacon(sim=mg.MiniGameOptions(functions='game', order_queue=16, move_follows=follows))
        rn = np.asarray(mg.play(g, mg.random_policy(g), jax.random.PRNGKey(1), a.episodes))
        sc = np.asarray(mg.play(g, mg.scripted_policy(g), jax.random.PRNGKey(0), a.episodes))
        print(f"{'+'.join(combo) or 'none':>24} follows={follows!s:5}: random {rn.mean():.2f} ± {rn.std():.2f} "
              f"(max {rn.max():.0f}); scripted {sc.mean():.2f}", flush=True)
