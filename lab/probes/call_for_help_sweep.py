"""The call-for-help sweep of issue 30 (2026-12-04): how far an idle unit answers an attacked ally (`HELP_RADIUS`)
against every published score it moves. 50 episodes, seed 0, of the scripted and uniform random players.

    python lab/probes/call_for_help_sweep.py 0 2 3 4 5 6 8      # ~1 min a radius on 2 cores

Radius 0 is `MiniGameSettings.call_for_help = False` (a unit answers only an attack on itself). Results and the
choice of 5 are in nbs/18z_sim_calibration.ipynb ("Reading the table") and docs/experiments.md.
"""
import sys
import jax, numpy as np
import reaver_nb.envs.sim as mg

CASES = (('FindAndDefeatZerglings', 'scripted'), ('FindAndDefeatZerglings', 'random'),
         ('DefeatZerglingsAndBanelings', 'random'), ('DefeatZerglingsAndBanelings', 'scripted'),
         ('DefeatRoaches', 'random'))

for r in map(float, sys.argv[1:] or ['5']):
    out = []
    for name, player in CASES:
        g = mg.MINIGAMES[name](sim=mg.MiniGameOptions(call_for_help=r > 0))
        mg.engine.HELP_RADIUS = r   # read by game_loop (a global of sim.engine) when the game's step is traced (below, in play)
        policy = mg.scripted_policy(g) if player == 'scripted' else mg.random_policy(g)
        s = np.asarray(mg.play(g, policy, jax.random.PRNGKey(0), 50))
        out.append(f'{name} {player} {s.mean():.2f}')
    print(f'radius {r:g}: ' + ' | '.join(out), flush=True)
