#!/usr/bin/env python
"""Issue 30: would the formation a group move keeps in the game close random play's gaps to SC2LE's random policy?

DESIGN.md says CollectMineralShards and DefeatRoaches need unit separation and group-move formation to match the game;
the simulation has the separation but sends every unit of a group move to the same point (nbs/18z_sim_calibration's table:
"departure (absent)"). This probe patches the orders (`sim.engine.give_order`, as `sim.game` calls it) at run time with one reading of the game's "magic box"
(community descriptions, no source with numbers for StarCraft II: tl.net post 6058308 of 2010 gives the rule and says
the ground box is much smaller than the air box; Liquipedia's "Magic Boxes" gives Brood War's 195 x 195 pixels for
ground units, another engine; this probe leaves the box unbounded): a move, attack-move or patrol to a point outside the bounding box
of the selected units keeps their formation (each unit goes to the point plus its offset from the group's centre);
to a point inside it they converge, as now. Orders onto a unit (attack, follow) and queued orders are unchanged. It
then plays uniform random play (`random_policy`, 100 episodes, seed 0, as nbs/18's table) on the maps with groups,
both ways. Nothing in the package changes.

    python lab/probes/formation_probe.py [--episodes 100]
"""
import argparse, time
import numpy as np, jax, jax.numpy as jnp
import reaver_nb.envs.sim as mg

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('--episodes', type=int, default=100)
ap.add_argument('--maps', nargs='+', default=['CollectMineralShards', 'DefeatRoaches', 'DefeatZerglingsAndBanelings',
                                               'FindAndDefeatZerglings'])
args = ap.parse_args()
SC2LE = {'CollectMineralShards': 17, 'DefeatRoaches': 1, 'DefeatZerglingsAndBanelings': 23}
original = mg.game.give_order   # what MiniGame.apply_action calls

def formation_command(u, queued, p, res, how, follows=False, radius=None):
    new = original(u, queued, p, res, how, follows, radius)
    sel = u.selected & u.alive
    now = sel & ~((queued == 1) & (u.order != mg.IDLE))
    point = (new.order == mg.MOVE) | (new.order == mg.ATTACK_MOVE) | (new.order == mg.PATROL)
    k = jnp.maximum(sel.sum(), 1)
    centre = jnp.stack([jnp.where(sel, u.pos[:, i], 0.).sum() / k for i in range(2)])
    lo = jnp.stack([jnp.where(sel, u.pos[:, i], jnp.inf).min() for i in range(2)])
    hi = jnp.stack([jnp.where(sel, u.pos[:, i], -jnp.inf).max() for i in range(2)])
    outside = jnp.any((p < lo) | (p > hi)) & (sel.sum() > 1)
    keep = now & point & outside
    goal = jnp.where(keep[:, None], p + u.pos - centre, new.goal)
    return new.replace(goal=goal)

for name in args.maps:
    row = []
    for label, cmd in (('one point (now)', original), ('formation', formation_command)):
        mg.game.give_order = cmd
        g = mg.MINIGAMES[name](); t = time.time()
        sc = np.asarray(mg.play(g, mg.random_policy(g), jax.random.PRNGKey(0), args.episodes))
        row.append(f"{label} {sc.mean():.2f} ± {sc.std():.2f} [{sc.min():g}, {sc.max():g}] ({time.time() - t:.0f} s)")
    mg.game.give_order = original
    print(f"{name}: " + '; '.join(row) + f"; SC2LE random {SC2LE.get(name, 'not found')}", flush=True)
