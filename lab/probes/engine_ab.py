#!/usr/bin/env python
"""Issue 30: where a JAX mini-game's step spends its time, and whether a change to the engine changes the game.

    python lab/probes/engine_ab.py profile BuildMarines --envs 256      # each part of a step jitted alone, ms a call
    python lab/probes/engine_ab.py dump $SCRATCH/new.npz                     # observations and rewards of random play
    PYTHONPATH=/path/to/old/checkout python lab/probes/engine_ab.py dump $SCRATCH/old.npz
    python lab/probes/engine_ab.py compare $SCRATCH/old.npz $SCRATCH/new.npz     # bit-identical or not, array by array
    python lab/probes/engine_ab.py states $SCRATCH/new_states.npz            # unit tables (queues in order), then compare
    python lab/probes/engine_ab.py draws $SCRATCH/new_draws.npz              # respawn draws, resets, rules; then compare
    python lab/probes/engine_ab.py fights                                # maps without enemies, fight left out or in

`profile` advances the envs 50 steps of random play first, so the state is not a fresh reset. `dump` plays every map
16 envs x 60 steps from fixed keys through `fused.vec_step` (the resets included), so two checkouts can be compared
(a worktree of the old commit on PYTHONPATH: the script prints which reaver_nb it imported). Compare only dumps
of this script: another program around the same game (other outputs, other fusions) can round the separation push
of DefeatRoaches' and DefeatZerglingsAndBanelings' crowds differently and part from it after 20-30 steps. Used on 2026-12-05
(docs/experiments.md, thirteenth session) for the renderer's passes and the economy loop on x/y planes.
"""
import argparse, time
import numpy as np
import jax, jax.numpy as jnp
import reaver_nb
try:   # the simulation as a package (issue 50)
    import reaver_nb.envs.sim as mg
    from reaver_nb.envs.sim import economy as E, MINIGAMES
    layers = mg.feature_layers
except ImportError:   # a checkout from before issue 50 (on PYTHONPATH for an A/B): the old modules and names
    from reaver_nb.envs import minigames as mg, economy as E
    from reaver_nb.envs.economy import ALL_MINIGAMES as MINIGAMES
    layers = mg._layers
from reaver_nb.training.fused import vec_reset, vec_step


def random_play(game, n):
    policy = jax.vmap(mg.random_policy(game))
    def step(vs, key):
        k1, k2 = jax.random.split(key)
        return vec_step(game, k2, vs, policy(vs.env, jax.random.split(k1, n)))[:2]
    return step


def timed(f, *args, repeats=20):
    """Median and fastest ms of `repeats` calls of jit(f)(*args), after two untimed ones (on this 2-core machine the
    median of a part moves by up to 2x between runs; the fastest call moves by a few %)."""
    f = jax.jit(f)
    for _ in range(2): jax.block_until_ready(f(*args))
    ts = []
    for _ in range(repeats):
        t = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts)), 1e3 * float(np.min(ts))


def profile(name, n):
    game = MINIGAMES[name]()
    step = jax.jit(random_play(game, n))
    vs = vec_reset(game, jax.random.PRNGKey(1), n)
    for i in range(50): vs = step(vs, jax.random.PRNGKey(i))[0]
    s, o = vs.env, game.options
    print(f"{name}: {len(s.units.kind[0])} unit rows, {n} envs; ms a call")
    rows = {'vec_step (random policy included)': (lambda vs: step(vs, jax.random.PRNGKey(0)), vs),
            'observe': (jax.vmap(game.observe), s),
            'screen layers': (jax.vmap(lambda u: layers(u, game.playable, jnp.zeros(2), mg.SCREEN_UNITS,
                                                            o.screen_size, o.screen_features, radius=game.radius)), s.units),
            'reset': (jax.vmap(game.reset), jax.random.split(jax.random.PRNGKey(2), n)),
            'draw (the respawn tries of one step)': (jax.vmap(game.draw), jax.random.split(jax.random.PRNGKey(3), n), s.units)}
    if isinstance(game, E.EconomyGame):
        u, eco = s.units, s.extra
        rows.update({'economy_loop (one game loop)': (jax.vmap(game.economy_loop), (u, eco)),
                     '  _walk': (jax.vmap(lambda u: E._walk(u, game.radius)), u),
                     '  _harvest': (jax.vmap(game._harvest), (u, eco)), '  _construct': (jax.vmap(game._construct), (u, eco)),
                     '  _produce': (jax.vmap(game._produce), (u, eco))})
    else:
        rows['game_loop (one game loop)'] = (jax.vmap(lambda u: mg.game_loop(
            u, game.radius, bool(game.sim_options.collisions), bool(game.sim_options.call_for_help), game.fights,
            **({'own_rows': game.own_rows} if hasattr(game, 'own_rows') else {}))), s.units)
    for label, (f, *a) in rows.items():
        a = tuple(a[0]) if len(a) == 1 and isinstance(a[0], tuple) else tuple(a)
        print(f"  {label:36s} {'%8.2f median %8.2f fastest' % timed(f, *a)}")


def dump(path):
    print('reaver_nb from', reaver_nb.__file__)
    out = {}
    for name, cls in MINIGAMES.items():
        game, n = cls(), 16
        step = random_play(game, n)
        run = jax.jit(lambda vs, key: jax.lax.scan(lambda vs, k: (lambda r: (r[0], (r[0].obs, r[1])))(step(vs, k)),
                                                   vs, jax.random.split(key, 60))[1])
        leaves = jax.tree.leaves(run(vec_reset(game, jax.random.PRNGKey(0), n), jax.random.PRNGKey(1)))
        for i, x in enumerate(leaves): out[f'{name}/{i}'] = np.asarray(x)
        print(name, len(leaves), 'arrays', flush=True)
    np.savez_compressed(path, **out)


def states(path):
    """Unit tables of random play (16 envs, every 20th of 120 steps), queues read in order where the checkout keeps
    them as a ring (`engine.queued_first`): a check on the state, where `dump` checks what an agent sees."""
    print('reaver_nb from', reaver_nb.__file__)
    out = {}
    for name, cls in MINIGAMES.items():
        game, n = cls(), 16
        step = jax.jit(random_play(game, n))
        vs = vec_reset(game, jax.random.PRNGKey(0), n)
        for t in range(120):
            vs = step(vs, jax.random.PRNGKey(100 + t))[0]
            if t % 20 == 19:
                u = vs.env.units
                if hasattr(mg, 'queued_first'): u = jax.vmap(mg.queued_first)(u)
                for f in ('pos', 'alive', 'hp', 'order', 'goal', 'target', 'home', 'q_order', 'q_goal', 'q_target', 'cooldown'):
                    out[f'{name}/{t}/{f}'] = np.asarray(getattr(u, f))
        print(name, flush=True)
    np.savez_compressed(path, **out)


def draws(path):
    """The respawn draws, resets and rules of the maps that draw (512 states with their units scattered over the
    playable area, 20% dead): what random play rarely reaches (a new set of zerglings, a fallback try)."""
    print('reaver_nb from', reaver_nb.__file__)
    out = {}
    for name in ('MoveToBeacon', 'CollectMineralShards', 'FindAndDefeatZerglings'):
        g, n = MINIGAMES[name](), 512
        keys = jax.random.split(jax.random.PRNGKey(11), n)
        s = jax.vmap(lambda k: g.reset(k)[1])(keys)
        (x0, y0), (x1, y1) = g.playable
        pos = jax.random.uniform(jax.random.PRNGKey(12), s.units.pos.shape, minval=jnp.array([x0, y0]),
                                 maxval=jnp.array([x1, y1]))
        u = s.units.replace(pos=pos, alive=jax.random.bernoulli(jax.random.PRNGKey(13), 0.8, s.units.alive.shape))
        d = jax.jit(jax.vmap(g.draw))(jax.random.split(jax.random.PRNGKey(14), n), u)
        for i, x in enumerate(jax.tree.leaves(d)): out[f'{name}/draw{i}'] = np.asarray(x)
        for i, x in enumerate(jax.tree.leaves(jax.jit(jax.vmap(g.reset))(keys))): out[f'{name}/reset{i}'] = np.asarray(x)
        if name != 'FindAndDefeatZerglings':
            for i, x in enumerate(jax.tree.leaves(jax.jit(jax.vmap(g.rules))(u, d, s.extra))): out[f'{name}/rules{i}'] = np.asarray(x)
        print(name, flush=True)
    np.savez_compressed(path, **out)


def fights(steps=32, calls=5):
    "Env steps/s of MoveToBeacon and CollectMineralShards with `fights` False (theirs) and True, alternating in one process."
    for name in ('MoveToBeacon', 'CollectMineralShards'):
        for n in (16, 256):
            rates = {}
            for f in (False, True):
                game = type(name, (MINIGAMES[name],), {'fights': f})()
                step = random_play(game, n)
                run = jax.jit(lambda c, k: jax.lax.scan(lambda c, k: (step(c, k)[0], None), c, jax.random.split(k, steps))[0])
                c = run(vec_reset(game, jax.random.PRNGKey(0), n), jax.random.PRNGKey(1))
                rates[f] = (run, jax.block_until_ready(run(c, jax.random.PRNGKey(2))), [])
            for _ in range(calls):
                for f, (run, c, got) in rates.items():
                    t = time.perf_counter(); jax.block_until_ready(run(c, jax.random.PRNGKey(3)))
                    got.append(n * steps / (time.perf_counter() - t))
            lean, full = (float(np.median(rates[f][2])) for f in (False, True))
            print(f"{name:22s} {n:5d} envs: without the fight {lean:9,.0f}, with it {full:9,.0f} env steps/s ({lean / full:.2f}x)")


def compare(a, b):
    a, b = np.load(a), np.load(b)
    differ = [k for k in a if k not in b or not np.array_equal(a[k], b[k])]
    print(f"{len(a)} arrays, {len(differ)} differ" + (f": {differ}" if differ else " (bit-identical)"))


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('profile'); p.add_argument('map', choices=list(MINIGAMES)); p.add_argument('--envs', type=int, default=256)
    p = sub.add_parser('dump'); p.add_argument('path')
    p = sub.add_parser('states'); p.add_argument('path')
    p = sub.add_parser('draws'); p.add_argument('path')
    p = sub.add_parser('compare'); p.add_argument('old'); p.add_argument('new')
    sub.add_parser('fights')
    a = ap.parse_args()
    if a.cmd == 'profile': profile(a.map, a.envs)
    elif a.cmd == 'dump': dump(a.path)
    elif a.cmd == 'states': states(a.path)
    elif a.cmd == 'draws': draws(a.path)
    elif a.cmd == 'fights': fights()
    else: compare(a.old, a.new)
