#!/usr/bin/env python
"""Issue 30: how XLA's CPU backend reduces a [envs, units, 16, 16] table over its unit axis, the renderer's shape.

    python lab/probes/reduction_micro.py --envs 256 --units 245

Prints ms a call (median of 20) of (1) one max over a materialised table in int32, int16 and int8, and a sum in
int32 and uint8; (2) one, two and three reductions (top key, `selected`, count) over a table computed in the same
program, as one reduction over all units and in passes of 8-64 units (`scan`), as `sim.render._pixel_reductions`
does with 32. Used on 2026-12-05 (bench/README.md, docs/experiments.md thirteenth session).
"""
import argparse, time
import numpy as np
import jax, jax.numpy as jnp

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('--envs', type=int, default=256)
ap.add_argument('--units', type=int, default=245)
a = ap.parse_args()
N, U, R = a.envs, a.units, 16
k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
pos, alive = jax.random.uniform(k1, (N, U, 2)) * 24, jax.random.uniform(k2, (N, U)) < 0.3
sel, key = jax.random.uniform(k3, (N, U)) < 0.3, jax.random.randint(k1, (N, U), 0, 5000).astype(jnp.int16)
table = jax.random.uniform(k1, (N, U, R, R)) < 0.02


def timed(f, *args):
    f = jax.jit(f); jax.block_until_ready(f(*args)); ts = []
    for _ in range(20):
        t = time.perf_counter(); jax.block_until_ready(f(*args)); ts.append(time.perf_counter() - t)
    return 1e3 * float(np.median(ts))


def cover(p, a):   # [U, R, R] discs of radius 1 on 1.5-unit pixels
    c = jnp.arange(R) * 1.5 + 0.75
    dx, dy = c[None, :] - p[:, 0:1], c[None, :] - p[:, 1:2]
    return (dy[:, :, None] ** 2 + dx[:, None, :] ** 2 <= 1.0) & a[:, None, None]


def reductions(c, s, k, how):
    out = [jnp.where(c, k[:, None, None], jnp.int16(-1)).max(0)]
    if how >= 2: out.append((c & s[:, None, None]).any(0))
    if how >= 3: out.append(c.sum(0, dtype=jnp.uint8))
    return out


def in_passes(p, a, s, k, how, size):
    m = -(-U // size) * size
    pad = lambda x: jnp.concatenate([x, jnp.zeros((m - U,) + x.shape[1:], x.dtype)]).reshape((m // size, size) + x.shape[1:])
    def add(acc, x):
        part = reductions(cover(x[0], x[1]), x[2], x[3], how)
        return [jnp.maximum(acc[0], part[0])] + [v | w if v.dtype == bool else v + w for v, w in zip(acc[1:], part[1:])], None
    init = [jnp.full((R, R), -1, jnp.int16), jnp.zeros((R, R), bool), jnp.zeros((R, R), jnp.uint8)][:how]
    return jax.lax.scan(add, init, tuple(map(pad, (p, a, s, k))))[0]


print(f"{N} envs x {U} units x {R}x{R} pixels, jax {jax.__version__} ({jax.default_backend()})")
for t in (jnp.int32, jnp.int16, jnp.int8):
    print(f"  max over a materialised table, {jnp.dtype(t).name:6s} {timed(lambda c: jnp.where(c, jnp.asarray(3, t), jnp.asarray(-1, t)).max(1), table):7.2f}")
for t in (jnp.int32, jnp.uint8):
    print(f"  sum over a materialised table, {jnp.dtype(t).name:6s} {timed(lambda c: c.sum(1, dtype=t), table):7.2f}")
for how in (1, 2, 3):
    print(f"  {how} reduction(s), all units at once      {timed(jax.vmap(lambda p, a, s, k: reductions(cover(p, a), s, k, how)), pos, alive, sel, key):7.2f}")
    for size in (8, 16, 32, 64):
        print(f"  {how} reduction(s), passes of {size:2d} units     {timed(jax.vmap(lambda p, a, s, k: in_passes(p, a, s, k, how, size)), pos, alive, sel, key):7.2f}")
