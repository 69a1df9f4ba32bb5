"""Three forms of the order queue pop (`sim.engine.next_order`) timed alone at 256 envs x 42 units x 16 slots:
the shipped shift on [units, slots, 2] goals, the same on [units, 2, slots] planes, and a ring buffer (a head index
per unit). bench/README.md quotes it (2026-12-04). Run: python lab/probes/queue_pop_ab.py"""
import time, statistics, jax, jax.numpy as jnp
N, U, Q = 256, 42, 16
k = jax.random.PRNGKey(0)
qo = jax.random.randint(k, (N, U, Q), 0, 4); qt = jax.random.randint(k, (N, U, Q), -1, 40)
qg = jax.random.uniform(k, (N, U, Q, 2)); qgT = jnp.swapaxes(qg, -1, -2)
order = jnp.zeros((N, U), jnp.int32); goal = jnp.zeros((N, U, 2)); target = jnp.zeros((N, U), jnp.int32)
def cur(qo, qg, qt, done, order, goal, target):
    shift = lambda q, empty: jnp.concatenate([q[:, 1:], jnp.broadcast_to(empty, q[:, :1].shape).astype(q.dtype)], 1)
    d1, d2 = done[:, None], done[:, None, None]
    return (jnp.where(done, qo[:, 0], order), jnp.where(d1, qg[:, 0], goal), jnp.where(done, qt[:, 0], target),
            jnp.where(d1, shift(qo, 0), qo), jnp.where(d2, shift(qg, qg[:, -1:]), qg), jnp.where(d1, shift(qt, -1), qt))
def planes(qo, qg, qt, done, order, goal, target):   # qg [U, 2, Q]
    shift = lambda q, empty: jnp.concatenate([q[..., 1:], jnp.broadcast_to(empty, q[..., :1].shape).astype(q.dtype)], -1)
    d1, d2 = done[:, None], done[:, None, None]
    return (jnp.where(done, qo[:, 0], order), jnp.where(d1, qg[..., 0], goal), jnp.where(done, qt[:, 0], target),
            jnp.where(d1, shift(qo, 0), qo), jnp.where(d2, shift(qg, qg[..., -1:]), qg), jnp.where(d1, shift(qt, -1), qt))
def bench(f, qg):
    def body(c, kk):
        qo, qg, qt, order, goal, target = c
        done = jax.random.bernoulli(kk, 0.1, (N, U))
        out = jax.vmap(f)(qo, qg, qt, done, order, goal, target)
        o, g, t, qo, qg, qt = out
        return (qo, qg, qt, o, g, t), None
    run = jax.jit(lambda c: jax.lax.scan(body, c, jax.random.split(k, 256))[0])
    c = (qo, qg, qt, order, goal, target)
    jax.block_until_ready(run(c)); ts = []
    for _ in range(7):
        t = time.perf_counter(); jax.block_until_ready(run(c)); ts.append(time.perf_counter() - t)
    return statistics.median(ts) / 256 * 1e3
for r in range(2):
    print('current [U,Q,2]', round(bench(cur, qg), 3), 'ms/call;  planes [U,2,Q]', round(bench(planes, qgT), 3), 'ms/call', flush=True)
def ring(qo, qg, qt, head, done, order, goal, target):
    h = head % Q
    oh = jax.nn.one_hot(h, Q, dtype=bool)
    fo = (qo * oh).sum(1); ft = (qt * oh).sum(1); fg = (qg * oh[..., None]).sum(1)
    return (jnp.where(done, fo, order), jnp.where(done[:, None], fg, goal), jnp.where(done, ft, target),
            head + done)
def bench_ring():
    def body(c, kk):
        head, order, goal, target = c
        done = jax.random.bernoulli(kk, 0.1, (N, U))
        o, g, t, head = jax.vmap(ring)(qo, qg, qt, head, done, order, goal, target)
        return (head, o, g, t), None
    run = jax.jit(lambda c: jax.lax.scan(body, c, jax.random.split(k, 256))[0])
    c = (jnp.zeros((N, U), jnp.int32), order, goal, target)
    jax.block_until_ready(run(c)); ts = []
    for _ in range(7):
        t = time.perf_counter(); jax.block_until_ready(run(c)); ts.append(time.perf_counter() - t)
    return statistics.median(ts) / 256 * 1e3
def bench_draw():   # the random draw of `done` alone, which every form above includes
    def body(c, kk):
        done = jax.random.bernoulli(kk, 0.1, (N, U))
        return c + done, None
    run = jax.jit(lambda c: jax.lax.scan(body, c, jax.random.split(k, 256))[0])
    c = jnp.zeros((N, U), jnp.int32)
    jax.block_until_ready(run(c)); ts = []
    for _ in range(7):
        t = time.perf_counter(); jax.block_until_ready(run(c)); ts.append(time.perf_counter() - t)
    return statistics.median(ts) / 256 * 1e3
for r in range(2):
    print('ring', round(bench_ring(), 3), 'draw only', round(bench_draw(), 3), flush=True)
