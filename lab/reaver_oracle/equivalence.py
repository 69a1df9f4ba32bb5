"""Equivalence test: Reaver 2.1.9's own TF model, policy and A2C/PPO losses against reaver_nb's, on one batch.

Reaver side, built exactly as its agent builds them: `reaver.agents.A2C` under the packaged `configs/sc2/base.gin` +
`MoveToBeacon.gin` (so `build_fully_conv` + `SC2MultiPolicy` + `A2CAgent.loss_fn`), specs from
`reaver.envs.SC2Env('MoveToBeacon', spatial_dim=16, step_mul=8)` (no game is started); PPO's loss is Reaver's
unchanged `PPOAgent.loss_fn` run on the same model and policy tensors; the optimizer step is `tf.train.AdamOptimizer`
with gin's learning rate after `tf.clip_by_global_norm`, as `ActorCriticAgent.__init__` applies it.
Our side: `reaver_nb.models.nets.make_model(value_through_trunk=True, spatial_init=0.1)` (FullyConv), `Policy`,
`ActorCriticAgent._loss` and `make_optimizer` with Reaver's MoveToBeacon hyper-parameters, on the JAX `MoveToBeacon`
with Reaver's nine feature layers and its function set.

Reaver's initialised Keras weights are transplanted into our Flax parameters; observations come from the JAX sim (8
envs after 3 random steps); actions are sampled from our policy; advantages, returns (and PPO's old log-probabilities
and values) are fixed random numbers fed to both losses, so return computation is bypassed (it is compared on its own
at the end). Each known deviation is measured as shipped and then neutralised in this script (never in reaver_nb),
after which outputs, losses and gradients must agree to float32 tolerance. Exit status 1 if a neutralised comparison
disagrees.

Run with the oracle venv (README.md), from the checkout's root:
    $ORACLE_VENV/bin/python lab/reaver_oracle/equivalence.py
"""
import os, sys, time, types, shutil, tempfile, dataclasses
T0 = time.time()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaver_shim  # noqa: F401  (legacy Keras, pysc2 via reaver_nb's compat layer, tf.estimator stand-in)
import numpy as np, gin
import jax, jax.numpy as jnp
import tensorflow.compat.v1 as tf
tf.disable_eager_execution(); tf.disable_v2_behavior()
tf.get_logger().setLevel('ERROR')
from tensorflow.compat.v1.keras.layers import Dense, Conv2D
import reaver as rvr
from reaver.agents.base.actor_critic import ActorCriticAgent as ReaverAC
from reaver.agents.ppo import ProximalPolicyOptimizationAgent as ReaverPPO
import reaver_nb.envs.sim as mg
from reaver_nb.spec import Space, Spec
from reaver_nb.models.nets import make_model
from reaver_nb.models.policy import Policy
from reaver_nb.agents.actor_critic import A2C, PPO, ActorCriticAgent, make_optimizer
from reaver_nb.agents.returns import next_values, gae, nstep_returns

SEED, B, WARM_STEPS = 0, 8, 3
TOL = 1e-5        # agree: max|ours - Reaver| <= TOL * max|Reaver| (per array) ...
GRAD_ATOL = 1e-6  # ... + GRAD_ATOL * (largest |Reaver| entry of the whole gradient), for gradients (see README)
ZERO_ATOL = 1e-4  # gradients that are exactly 0 in exact arithmetic: both sides' noise <= ZERO_ATOL * that entry
LR, ENT, VCOEF, CLIP_GRAD = 5e-4, 0.0005, 0.5, 100.0   # Reaver's packaged MoveToBeacon.gin over base.gin
PPO_CLIP, PPO_VCLIP = 0.2, 0.5   # PPOAgent's class defaults (base.gin sets clip_value = 0.0; 0.5 exercises the clip)
def tick(msg): print(f'[{time.time() - T0:5.1f}s] {msg}', file=sys.stderr, flush=True)

# ---------------------------------------------------------------------------------------------------------------- specs
cfg_dir = os.path.join(os.path.dirname(rvr.__file__), 'configs', 'sc2')
gin.parse_config_files_and_bindings([os.path.join(cfg_dir, 'base.gin'), os.path.join(cfg_dir, 'MoveToBeacon.gin')],
                                    ["build_fully_conv.data_format = 'channels_first'"])
assert (gin.query_parameter('tf.train.AdamOptimizer.learning_rate'), gin.query_parameter('ACAgent.entropy_coef'),
        gin.query_parameter('ACAgent.value_coef'), gin.query_parameter('ACAgent.clip_grads_norm')) == \
       (LR, ENT, VCOEF, CLIP_GRAD)
SCREEN = ('player_relative', 'selected', 'visibility_map', 'unit_hit_points_ratio', 'unit_density')
MINIMAP = ('player_relative', 'selected', 'visibility_map', 'camera')
g = mg.MoveToBeacon(screen_features=SCREEN, minimap_features=MINIMAP,
                    sim=mg.MiniGameOptions(functions='game', order_queue=16))
ref = rvr.envs.SC2Env('MoveToBeacon', spatial_dim=16, step_mul=8)
obs_spec, act_spec = ref.obs_spec(), ref.act_spec()
assert list(g.function_ids) == list(ref.act_wrapper.func_ids), (g.function_ids, ref.act_wrapper.func_ids)
assert tuple(obs_spec.spaces[0].spatial_feats) == SCREEN and tuple(obs_spec.spaces[1].spatial_feats) == MINIMAP
R_NAMES = [s.name for s in act_spec.spaces]          # Reaver's heads (12)
O_NAMES = list(g.act_spec.names)                     # ours (10)
EXTRA = [n for n in R_NAMES if n not in O_NAMES]     # Reaver heads we do not have
assert not set(O_NAMES) - set(R_NAMES)
ARGS_MASK = np.asarray(act_spec.spaces[0].args_mask, bool)   # [functions, Reaver argument heads]
used_by_ok = all(set(np.flatnonzero(ARGS_MASK[:, R_NAMES.index(s.name) - 1])) == set(s.used_by)
                 for s in g.act_spec if s.name != 'function_id')
extra_unused = all(not ARGS_MASK[:, R_NAMES.index(n) - 1].any() for n in EXTRA)
SCALAR = [i for i, d in enumerate(obs_spec.spaces[0].spatial_dims) if d == 1]   # screen layers Reaver log-scales
assert all(d > 1 for d in obs_spec.spaces[1].spatial_dims)
H = W = 16
C = 64   # state channels: 32 screen + 32 minimap (Reaver: [N, C, H, W] flattened C-major; ours [..., H, W, C])

# ---------------------------------------------------------------------------------------------------------------- batch
tick('batch')
@jax.jit
def warm_batch(key):
    "B envs, WARM_STEPS uniformly random pysc2 calls each (reaver_nb's random_policy); the last observations."
    k0, key = jax.random.split(key)
    obs, s = jax.vmap(g.reset)(jax.random.split(k0, B))
    pol = mg.random_policy(g)
    def body(carry, k):
        obs, s = carry
        k1, k2 = jax.random.split(k)
        a = jax.vmap(pol)(s, jax.random.split(k1, B))
        obs, s, *_ = jax.vmap(g.step)(jax.random.split(k2, B), s, a)
        return (obs, s), None
    return jax.lax.scan(body, (obs, s), jax.random.split(key, WARM_STEPS))[0][0]
obs = tuple(np.asarray(o) for o in warm_batch(jax.random.PRNGKey(SEED)))
avail = obs[9] > 0

def reaver_obs(obs, neutral_log=False):
    """Our per-layer tuple -> Reaver's inputs (channels-first stacks, available_actions, player). `neutral_log` adds
    1 - 1e-5 to the scalar screen layers, so Reaver's log(x + 1e-5) computes our log1p(x) (deviation ii)."""
    screen = np.stack(obs[:5], 1).astype(np.float32)
    minimap = np.stack(obs[5:9], 1).astype(np.float32)
    if neutral_log: screen[:, SCALAR] += np.float32(1 - 1e-5)
    return [screen, minimap, obs[9].astype(np.float32), obs[10].astype(np.float32)]
obs_n, obs_raw = reaver_obs(obs, neutral_log=True), reaver_obs(obs)

# ----------------------------------------------------------------------------------------------------- Reaver's agent
tick("Reaver's agent")
class SessionManager(rvr.utils.tensorflow.SessionManager):
    "Reaver's, initialising without finalising the graph (its restore_or_init does both), so gradients can be added."
    def restore_or_init(self): self.sess.run(tf.global_variables_initializer())

tf.set_random_seed(SEED)
tmp = tempfile.mkdtemp(prefix='reaver_equiv_')
sess = tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=1))
agent_r = rvr.agents.A2C(obs_spec, act_spec, sess_mgr=SessionManager(sess, tmp, 0, training_enabled=True), n_envs=B)
model_r, pol_r = agent_r.model, agent_r.policy
assert (agent_r.value_coef, agent_r.entropy_coef) == (VCOEF, ENT)
WV = model_r.trainable_weights
assert set(WV) == set(tf.trainable_variables())   # what the agent's optimizer.compute_gradients differentiates
WNAMES = [w.name.split(':')[0] for w in WV]
dense = lambda gs: [tf.convert_to_tensor(x) if x is not None else tf.zeros_like(w) for x, w in zip(gs, WV)]
adv_ph, ret_ph = agent_r.loss_inputs
r_grads = {k: dense(tf.gradients(t, WV)) for k, t in
           zip(('total', 'policy', 'value', 'entropy'), [agent_r.loss_op, *agent_r.loss_terms])}
r_head_ent = [d.entropy() for d in pol_r.dists]
ppo_ns = types.SimpleNamespace(policy=pol_r, value=agent_r.value, clip_ratio=PPO_CLIP, clip_value=PPO_VCLIP,
                               value_coef=VCOEF, entropy_coef=ENT)
r_ppo_loss, r_ppo_terms, r_ppo_inputs = ReaverPPO.loss_fn(ppo_ns)   # Reaver's PPO loss code on the same tensors
r_ppo_grads = dense(tf.gradients(r_ppo_loss, WV))
# the agent's optimizer step (actor_critic.py: clip_by_global_norm, then gin's AdamOptimizer), fed given gradients
# (applied to zero-valued copies of the weights: Adam's step does not depend on them, and w1 - w0 in float32 would lose
# the step's low bits to the weights' rounding)
g_ph = [tf.placeholder(tf.float32, w.shape) for w in WV]
zv = [tf.Variable(tf.zeros(w.shape), trainable=False) for w in WV]
opt = tf.train.AdamOptimizer(learning_rate=gin.query_parameter('tf.train.AdamOptimizer.learning_rate'))
adam_op = opt.apply_gradients(zip(tf.clip_by_global_norm(g_ph, CLIP_GRAD, tf.global_norm(g_ph))[0], zv))
sess.run(tf.variables_initializer(opt.variables() + zv))
w0 = dict(zip(WNAMES, sess.run(WV)))

# ----------------------------------------------------------------------------------- weights: Reaver <-> our layout
def head_layer(t):
    "The Dense or Conv2D producing model output `t` (through the Flatten / Lambda-mask / squeeze after it)."
    while True:
        layer, node_index, _ = t._keras_history
        if isinstance(layer, (Dense, Conv2D)): return layer.name
        t = layer._inbound_nodes[node_index].input_tensors
        if isinstance(t, (list, tuple)): t = t[0]

uid = lambda name, base: 0 if name == base else int(name[len(base) + 1:])
def layer_map():
    "Keras layer name -> our parameter path (None: one of Reaver's extra heads)."
    m = {}
    layers = {n.split('/')[0] for n in WNAMES}
    embeds = sorted((n for n in layers if n.startswith('embedding')), key=lambda n: uid(n, 'embedding'))
    convs = sorted((n for n in layers if n.startswith('conv2d')), key=lambda n: uid(n, 'conv2d'))
    it = iter(embeds)   # Keras numbers layers in creation order: screen's embeddings and convs, then minimap's
    for block, sp in (('screen', obs_spec.spaces[0]), ('minimap', obs_spec.spaces[1])):
        for f, d in zip(sp.spatial_feats, sp.spatial_dims):
            if d > 1: m[next(it)] = (block, f'embed_{f}')
    m[convs[0]], m[convs[1]] = ('screen', 'Conv_0'), ('screen', 'Conv_1')
    m[convs[2]], m[convs[3]] = ('minimap', 'Conv_0'), ('minimap', 'Conv_1')
    m[head_layer(model_r.outputs[-1])] = ('value',)
    for name, t, s in zip(R_NAMES, model_r.outputs[:-1], act_spec.spaces):
        m[head_layer(t)] = None if name in EXTRA else (('spatial_' if s.is_spatial() else 'logits_') + name,)
    fc = [n for n in layers if n not in m]
    assert len(fc) == 1, fc
    m[fc[0]] = ('fc',)
    return m
LMAP = layer_map()
HEAD_OF = {head_layer(t): n for n, t in zip(R_NAMES, model_r.outputs[:-1])}
ZERO_GRAD = {f'{lname}/bias' for lname, n in HEAD_OF.items() if act_spec.spaces[R_NAMES.index(n)].is_spatial()}
LEAF = dict(embeddings='embedding')

def to_ours(kw):
    "Reaver weights by Keras name -> (our Flax params, {extra head: {kernel, bias}})."
    p, extra = {}, {}
    for wname, x in kw.items():
        lname, leaf = wname.split('/')
        path = LMAP[lname]
        if path is None: extra.setdefault(HEAD_OF[lname], {})[leaf] = jnp.asarray(x); continue
        if path == ('fc',) and leaf == 'kernel': x = x.reshape(C, H, W, -1).transpose(1, 2, 0, 3).reshape(H * W * C, -1)
        d = p
        for k in path: d = d.setdefault(k, {})
        d[LEAF.get(leaf, leaf)] = jnp.asarray(x)
    return {'params': p}, extra

def to_reaver(params, extra):
    "The inverse of to_ours (gradients and updates in Reaver's layout)."
    out = {}
    for wname in WNAMES:
        lname, leaf = wname.split('/')
        path = LMAP[lname]
        if path is None: out[wname] = np.asarray(extra[HEAD_OF[lname]][leaf]); continue
        d = params['params']
        for k in path: d = d[k]
        x = np.asarray(d[LEAF.get(leaf, leaf)])
        if path == ('fc',) and leaf == 'kernel': x = x.reshape(H, W, C, -1).transpose(2, 0, 1, 3).reshape(C * H * W, -1)
        out[wname] = x
    return out

def pretty(wname):
    lname = wname.split('/')[0]
    path = LMAP[lname]
    return f"{wname} ({'/'.join(path) if path else 'extra head ' + HEAD_OF[lname]})"

# ------------------------------------------------------------------------------------------------------------ our side
tick('our side')
model = make_model(g.obs_spec, g.act_spec, value_through_trunk=True, spatial_init=0.1)
hp_a2c = A2C(learning_rate=LR, entropy_coef=ENT, max_grad_norm=CLIP_GRAD, normalize_advantages=False,
             value_coef=VCOEF, gae_lambda=1.0, discount=0.99, traj_len=1)
hp_ppo = PPO(learning_rate=LR, entropy_coef=ENT, max_grad_norm=CLIP_GRAD, normalize_advantages=False,
             value_coef=VCOEF, gae_lambda=1.0, discount=0.99, traj_len=1, n_epochs=1, minibatch_size=0,
             clip_ratio=PPO_CLIP, clip_value=PPO_VCLIP)
agent_a2c = ActorCriticAgent(g.obs_spec, g.act_spec, hp_a2c, n_envs=B, model=model)
agent_ppo = ActorCriticAgent(g.obs_spec, g.act_spec, hp_ppo, n_envs=B, model=model)
our_init = jax.jit(model.init)(jax.random.PRNGKey(SEED), g.obs_spec.zeros((1,)))
params, extra = to_ours(w0)
assert jax.tree.structure(params) == jax.tree.structure(our_init), 'transplant does not fill our parameter tree'
assert all(a.shape == b.shape for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(our_init)))
assert all(np.array_equal(w0[k], v) for k, v in to_reaver(params, extra).items())   # the maps are inverse
policy = Policy(g.act_spec)
unmasked = Policy(Spec([dataclasses.replace(s, used_by=()) for s in g.act_spec]))   # every head weighted 1
head_pol = [Policy(Spec([dataclasses.replace(s, used_by=())])) for s in g.act_spec]
extra_pol = {n: Policy(Spec([Space((), 'int32', 0, act_spec.spaces[R_NAMES.index(n)].size() - 1, categorical=True,
                                   name=n)])) for n in EXTRA}

def reaver_entropy(params, extra, obs):
    """Reaver's MultiPolicy.entropy computed with our model: every head's entropy unmasked, plus Reaver's extra heads
    (its Dense layers, transplanted, on our fc activations)."""
    (dists, _), st = model.apply(params, obs, capture_intermediates=True)
    fc = jax.nn.relu(st['intermediates']['fc']['__call__'][0])
    h = unmasked.entropy(dists)
    for n in EXTRA: h = h + extra_pol[n].entropy([fc @ extra[n]['kernel'] + extra[n]['bias']])
    return h

TERMS = ('a2c_loss', 'a2c_policy', 'a2c_value', 'a2c_entropy', 'reaver_entropy', 'ppo_loss', 'ppo_policy', 'ppo_value')
@jax.jit
def ours_all(params, extra, obs, key, adv, ret_noise, adv_p, lp_noise, v_noise):
    """Our forward pass, sampled actions, log-probs, per-head entropies, and every loss term with its gradient (the
    vjp vmapped over the terms): our `_loss` for A2C and PPO (total, policy, value, entropy as it returns them) and
    Reaver's entropy on our model. Neutralised losses and gradients are linear combinations of these."""
    dists, value = model.apply(params, obs)
    acts = policy.sample(key, dists)
    logli = policy.log_prob(dists, acts)
    head_ent = [p.entropy([d]) for p, d in zip(head_pol, dists)]
    sg = jax.lax.stop_gradient
    ret = sg(value) + ret_noise   # value targets near the value, so the value error is O(1)
    b = dict(obs=obs, actions=acts, adv=adv, ret=ret, logp=sg(logli), values=sg(value))
    bp = dict(b, adv=adv_p, logp=sg(logli) + lp_noise, values=sg(value) + v_noise)
    def terms(params, extra):
        la, aa = agent_a2c._loss(params, b)
        lp, ap = agent_ppo._loss(params, bp)
        t = dict(a2c_loss=la, a2c_policy=aa['policy_loss'], a2c_value=aa['value_loss'], a2c_entropy=aa['entropy'],
                 reaver_entropy=reaver_entropy(params, extra, obs).mean(), ppo_loss=lp, ppo_policy=ap['policy_loss'],
                 ppo_value=ap['value_loss'])
        return jnp.stack([t[k] for k in TERMS]), ap['clip_frac']
    vals, vjp, clip_frac = jax.vjp(terms, params, extra, has_aux=True)
    jac = jax.vmap(vjp)(jnp.eye(len(TERMS)))   # row i: the gradient of term i
    return dict(dists=dists, value=value, acts=acts, logli=logli, head_ent=head_ent, terms=vals, ret=ret,
                clip_frac=clip_frac, jac=jac, logp_old=bp['logp'], v_old=bp['values'])

# ----------------------------------------------------------------------------------------------------------- the table
ROWS = []
def row(name, ours, reaver, expect=True, note='', atol=0.):
    """One comparison: agree if max|ours - Reaver| <= TOL * max|Reaver| + atol. expect=False: a known deviation shown
    as shipped (listed, not counted as a failure)."""
    o, r = np.asarray(ours, np.float64), np.asarray(reaver, np.float64)
    assert o.shape == r.shape, (name, o.shape, r.shape)
    d = float(np.abs(o - r).max()) if o.size else 0.
    s = float(np.abs(r).max()) if r.size else 0.
    ok = d <= TOL * s + atol
    ROWS.append((name, d, s, d / s if s > 0 else d, ok, expect, note))
    return d, d / s if s > 0 else d

def grad_rows(name, ours_kw, reaver_list, expect=True, note='', each=False, only=None):
    """Gradients per Reaver weight, with GRAD_ATOL x the largest entry of the whole gradient as the absolute floor;
    one row for the weight closest to failing (and one per weight if `each`). The spatial heads' biases have an exactly
    zero gradient (a softmax over cells ignores a shift): there both sides must be noise, <= ZERO_ATOL x that entry."""
    S = max(float(np.abs(r).max()) for r in reaver_list)
    worst, n0 = None, len(ROWS)
    for wname, rg in zip(WNAMES, reaver_list):
        if only is not None and wname not in only: continue
        if wname in ZERO_GRAD:
            noise = max(float(np.abs(ours_kw[wname]).max()), float(np.abs(rg).max()))
            d = float(np.abs(ours_kw[wname] - rg).max())
            ROWS.append((f"  d/d {pretty(wname)}", d, float(np.abs(rg).max()), d / (float(np.abs(rg).max()) or 1.),
                         noise <= ZERO_ATOL * S, expect, f'exactly 0 in exact arithmetic: both <= {noise / S:.1g} x max'))
            score = noise / (ZERO_ATOL * S)
        else:
            row(f"  d/d {pretty(wname)}", ours_kw[wname], rg, expect, atol=GRAD_ATOL * S)
            name_, d, s, rel, ok, *_ = ROWS[-1]
            score = d / (TOL * s + GRAD_ATOL * S)
        if worst is None or score > worst[0]: worst = (score, wname) + ROWS[-1][1:]
    per_weight = ROWS[n0:]
    del ROWS[n0:]
    _, wname, d, s, rel, ok, *_ = worst
    ROWS.append((f"{name} [closest: {wname}]", d, s, rel, all(r[4] for r in per_weight), expect,
                 note or f'largest entry {S:.2g}'))
    if each: ROWS.extend(per_weight)
    return worst[0]

def run_r(fetches, obs_r, acts=None, extra_feed=()):
    feed = dict(zip(model_r.inputs, obs_r))
    if acts is not None: feed.update(zip(pol_r.inputs, acts))
    feed.update(extra_feed)
    return sess.run(fetches, feed)

# ------------------------------------------------------------------------------------------------- our computations
tick('ours (one compiled program)')
rng = np.random.default_rng(SEED)
adv = rng.normal(size=B).astype(np.float32)
ret_noise = rng.normal(size=B).astype(np.float32)
adv_p = rng.normal(size=B).astype(np.float32)
lp_noise = rng.normal(0, 0.3, B).astype(np.float32)
v_noise = rng.normal(0, 0.5, B).astype(np.float32)
O = jax.tree.map(np.asarray, ours_all(params, extra, obs, jax.random.PRNGKey(SEED + 1), adv, ret_noise, adv_p,
                                      lp_noise, v_noise))
ret = O['ret']
T = dict(zip(TERMS, O['terms']))
J = {k: (jax.tree.map(lambda x: x[i], O['jac'][0]), jax.tree.map(lambda x: x[i], O['jac'][1]))
     for i, k in enumerate(TERMS)}
lin = lambda *pairs: jax.tree.map(lambda *xs: sum(c * x for c, x in zip(pairs[::2], xs)), *[J[k] for k in pairs[1::2]])
no_extra = lambda gr: (gr[0], jax.tree.map(np.zeros_like, gr[1]))   # our loss has no extra heads: zero gradient
dists, value, acts = O['dists'], O['value'], O['acts']

# ------------------------------------------------------------------------------------------------ Reaver computations
tick('Reaver')
acts_r = [acts[O_NAMES.index(n)] if n in O_NAMES else
          rng.integers(0, act_spec.spaces[R_NAMES.index(n)].size(), B).astype(np.int32) for n in R_NAMES]
feed_loss = {adv_ph: adv, ret_ph: ret, **dict(zip(r_ppo_inputs, [adv_p, ret, O['logp_old'], O['v_old']]))}
(r_out, r_logli, r_ents, r_loss, r_terms, r_g, rp_loss, rp_terms, rp_g) = run_r(
    [model_r.outputs, pol_r.logli, r_head_ent, agent_r.loss_op, agent_r.loss_terms, r_grads, r_ppo_loss, r_ppo_terms,
     r_ppo_grads], obs_n, acts_r, feed_loss)
r_out_raw, r_loss_raw, r_g_raw = run_r([model_r.outputs, agent_r.loss_op, r_grads['total']], obs_raw, acts_r,
                                       feed_loss)
r_pl, r_vl, r_el = r_terms
rp_pl, rp_vl, rp_el = rp_terms
r_logits = dict(zip(R_NAMES, r_out[:-1]))

# ------------------------------------------------------------------------------------------------ (b) forward outputs
row('value', value, r_out[-1])
row('function_id logits, available ids', dists[0][avail], r_logits['function_id'][avail])
row('function_id logits, unavailable ids', dists[0][~avail], r_logits['function_id'][~avail], expect=False,
    note='iii: -1e9 vs -1000')
sm = lambda x: np.asarray(jax.nn.softmax(jnp.asarray(x, jnp.float32)))
row('function_id softmax, all ids', sm(dists[0]), sm(r_logits['function_id']), note='iii: no effect')
for n, d in zip(O_NAMES[1:], dists[1:]): row(f'{n} logits', d, r_logits[n])
dev_ii = [row('value, Reaver fed raw scalar layers', value, r_out_raw[-1], expect=False, note='ii'),
          row('function_id logits (avail.), raw scalar layers', dists[0][avail], r_out_raw[0][avail], expect=False,
              note='ii'),
          row('screen logits, raw scalar layers', dists[O_NAMES.index('screen')], r_out_raw[1], expect=False,
              note='ii')]

# ------------------------------------------------------------------------------ (c) A2C: log-probs, loss terms, grads
row('log-prob of the actions (logli, args-masked)', O['logli'], r_logli)
for n, h in zip(O_NAMES, O['head_ent']): row(f'entropy of head {n}', h, r_ents[R_NAMES.index(n)])
row('A2C policy loss', T['a2c_policy'], r_pl)
row('A2C value-loss term, as shipped', VCOEF * T['a2c_value'], r_vl, expect=False, note='v-a: ours x 0.5')
row('A2C value-loss term, neutralised', 2 * VCOEF * T['a2c_value'], r_vl)
row('A2C mean entropy, as shipped', T['a2c_entropy'], r_el / ENT, expect=False, note='i')
row('A2C mean entropy, neutralised', T['reaver_entropy'], r_el / ENT)
row('A2C total loss, as shipped', T['a2c_loss'], r_loss, expect=False, note='i, v-a')
a2c_v = T['a2c_loss'] + VCOEF * T['a2c_value']
a2c_n = a2c_v + ENT * T['a2c_entropy'] - ENT * T['reaver_entropy']
row('A2C total loss, only v-a neutralised', a2c_v, r_loss, expect=False, note='i')
row('A2C total loss, neutralised', a2c_n, r_loss)
g_a2c_n = lin(1., 'a2c_loss', VCOEF, 'a2c_value', ENT, 'a2c_entropy', -ENT, 'reaver_entropy')
grad_rows('A2C grads, as shipped', to_reaver(*no_extra(J['a2c_loss'])), r_g['total'], expect=False, note='i, v-a')
grad_rows('A2C grads, only v-a neutralised', to_reaver(*no_extra(lin(1., 'a2c_loss', VCOEF, 'a2c_value'))),
          r_g['total'], expect=False, note='i')
FC = [k for k in WNAMES if LMAP[k.split('/')[0]] == ('fc',)]
grad_rows('A2C fc grads, only v-a neutralised', to_reaver(*no_extra(lin(1., 'a2c_loss', VCOEF, 'a2c_value'))),
          r_g['total'], expect=False, note='i, through the trunk', only=FC)
grad_rows('A2C grads, neutralised', to_reaver(*g_a2c_n), r_g['total'], each=True)
grad_rows('  policy-loss grads alone', to_reaver(*no_extra(J['a2c_policy'])), r_g['policy'])
grad_rows('  value-loss grads alone (x 2)', to_reaver(*no_extra(lin(2 * VCOEF, 'a2c_value'))), r_g['value'])
grad_rows('  entropy-term grads alone (Reaver entropy)', to_reaver(*lin(ENT, 'reaver_entropy')), r_g['entropy'])
d_raw_loss = row('A2C total loss, neutralised, Reaver raw scalar layers', a2c_n, r_loss_raw, expect=False, note='ii')
grad_rows('A2C grads, neutralised, Reaver raw scalar layers', to_reaver(*g_a2c_n), r_g_raw, expect=False, note='ii')

# --------------------------------------------------------------------------------------------------------- PPO loss
vclip_frac = float(np.mean(np.abs(value - O['v_old']) > PPO_VCLIP))
row('PPO clipped policy loss', T['ppo_policy'], rp_pl, note=f"ratio clipped on {float(O['clip_frac']):.2f}")
row('PPO value-loss term, as shipped', VCOEF * T['ppo_value'], rp_vl, expect=False, note='v-a')
row('PPO value-loss term, neutralised', 2 * VCOEF * T['ppo_value'], rp_vl, note=f'value clipped on {vclip_frac:.2f}')
row('PPO total loss, as shipped', T['ppo_loss'], rp_loss, expect=False, note='i, v-a')
row('PPO total loss, neutralised', T['ppo_loss'] + VCOEF * T['ppo_value'] + ENT * T['a2c_entropy']
    - ENT * T['reaver_entropy'], rp_loss)
grad_rows('PPO grads, as shipped', to_reaver(*no_extra(J['ppo_loss'])), rp_g, expect=False, note='i, v-a')
grad_rows('PPO grads, neutralised', to_reaver(*lin(1., 'ppo_loss', VCOEF, 'ppo_value', ENT, 'a2c_entropy',
                                                   -ENT, 'reaver_entropy')), rp_g)

# ------------------------------------------------------------------------------- (iv) one optimizer step, same grads
tick('optimizer')
gnorm = float(np.sqrt(sum(np.sum(np.square(x.astype(np.float64))) for x in r_g['total'])))
sess.run(adam_op, dict(zip(g_ph, r_g['total'])))
tf_kw = dict(zip(WNAMES, sess.run(zv)))
tf_step = np.concatenate([tf_kw[k].ravel() for k in WNAMES])
EPS = {'A2C.adam_eps default 1e-5': 1e-5, 'adam_eps 1e-8 (configs/sc2.gin)': 1e-8,
       "adam_eps 1e-8/sqrt(1-0.999), TF's eps at step 1": 1e-8 / np.sqrt(1 - 0.999)}
txs = [make_optimizer(dataclasses.replace(hp_a2c, adam_eps=e), None, 1) for e in EPS.values()]
@jax.jit
def optax_steps(grads, full):
    return [tx.update(grads, tx.init(full), full)[0] for tx in txs]
g_tf_ours = to_ours(dict(zip(WNAMES, r_g['total'])))   # Reaver's gradients in our layout: isolates the optimizer
adam = {}
for (label, eps), upd in zip(EPS.items(), optax_steps(g_tf_ours, (params, extra))):
    st = to_reaver(*upd)
    o = np.concatenate([st[k].ravel() for k in WNAMES])
    frac = float(np.mean(np.abs(o - tf_step) > 0.01 * LR))
    adam[label] = (float(np.abs(o - tf_step).max()) / LR, frac, max(float(np.abs(st[k]).max()) for k in ZERO_GRAD) / LR)
    row(f'Adam step-1 update, {label}', o, tf_step, expect='sqrt' in label,
        note=f'{100 * frac:.1f}% of weights off by >1% of lr')
g_all = np.abs(np.concatenate([x.ravel() for x in r_g['total']]))
zero_g, small_g = float(np.mean(g_all == 0)), float(np.mean((g_all > 0) & (g_all < 1e-3)))

# -------------------------------------------------------------------------------------- (v) returns and advantages
tick('returns')
TT = 5
R = (rng.random((TT, B)) < 0.3).astype(np.float32)
D = (rng.random((TT, B)) < 0.2).astype(np.float32)
V = rng.normal(size=(TT, B)).astype(np.float32)
boot = rng.normal(size=B).astype(np.float32)
def reaver_returns(lam, norm_adv=False):
    "Reaver's ActorCriticAgent.compute_advantages_and_returns on a [T, N] rollout."
    ns = types.SimpleNamespace(clip_rewards=0., rewards=R, dones=D, discount=0.99, values=V, gae_lambda=lam,
                               normalize_advantages=norm_adv, normalize_returns=False,
                               discounted_cumsum=ReaverAC.discounted_cumsum)
    return ReaverAC.compute_advantages_and_returns(ns, boot)
@jax.jit
def our_returns(R, D, V, boot):
    Vx = jnp.concatenate([V, boot[None]])
    nv = next_values(Vx, D > 0, jnp.zeros(D.shape, bool), jnp.zeros(D.shape))
    ret = nstep_returns(R, nv, D > 0, 0.99)
    adv_g, ret_g = gae(R, Vx, nv, D > 0, 0.99, 0.95)
    return ret, ret - V, adv_g, ret_g, (adv_g - adv_g.mean()) / (adv_g.std() + 1e-8)   # A2C/PPO._update's formulas
ret_o, adv_o, adv_g, ret_g, adv_gn = our_returns(R, D, V, boot)
adv_r0, ret_r0 = reaver_returns(0.0)
adv_r95, ret_r95 = reaver_returns(0.95)
adv_rn, _ = reaver_returns(0.95, True)
row('n-step returns (Reaver gae_lambda 0 / ours 1)', ret_o, ret_r0)
row('n-step advantages', adv_o, adv_r0)
row('GAE(0.95) advantages', adv_g, adv_r95)
d_lret = row('GAE(0.95) value targets', ret_g, ret_r95, expect=False, note='v-c: lambda-returns vs n-step')
row('normalised advantages (std + 1e-8 vs + 1e-10)', adv_gn, adv_rn, note='v-d')

# ------------------------------------------------------------------------------------------------ (v) initialisers
ours_init_r = to_reaver(our_init, jax.tree.map(np.zeros_like, extra))
init_std = [(pretty(k), float(np.std(ours_init_r[k])), float(np.std(w0[k]))) for k in WNAMES
            if not k.endswith('bias') and LMAP[k.split('/')[0]] is not None]
bias_zero = all(not np.any(w0[k]) and not np.any(ours_init_r[k]) for k in WNAMES if k.endswith('bias'))

# --------------------------------------------------------------------------------------------------------- printout
tick('printout')
print(f"Reaver 2.1.9 (TF {tf.__version__}, legacy Keras) vs reaver_nb (jax {jax.__version__}, flax); {B} observations "
      f"from jax MoveToBeacon after {WARM_STEPS} random steps, seed {SEED}.\nReaver heads {len(R_NAMES)}, ours "
      f"{len(O_NAMES)}; function ids equal; Reaver args_mask == our used_by: {used_by_ok}.\nSampled function ids "
      f"(slots): {acts[0].tolist()} = pysc2 {[g.function_ids[i] for i in acts[0]]}; available per row: "
      f"{avail.sum(1).tolist()}.")
print(f"agree? = max|diff| <= {TOL:g} x max|Reaver| (+ {GRAD_ATOL:g} x the largest entry of the whole gradient, for "
      f"gradients).\n'no': a known deviation, as shipped; 'within tol.': one too small to show on this batch.\n")
w = max(len(r[0]) for r in ROWS) + 1
print(f"{'quantity':<{w}} {'max|diff|':>9} {'max|Reaver|':>11} {'rel':>8}  agree?")
fails = []
for name, d, s, rel, ok, expect, note in ROWS:
    verdict = ('yes' if ok else 'NO') if expect else ('no' if not ok else 'within tol.')
    if expect and not ok: fails.append(name.strip())
    print(f"{name:<{w}} {d:9.3g} {s:11.3g} {rel:8.2g}  {verdict}{'  (' + note + ')' if note else ''}")

print("\nInitial weight std, ours (model.init, seed 0) vs Reaver (Keras initialisers, graph seed 0):")
for name, so, sr in init_std: print(f"  {name:<58} ours {so:.4f}  Reaver {sr:.4f}  ratio {so / sr:5.2f}")
print(f"  all biases zero on both sides: {bias_zero}")

emb = [(so, sr) for n, so, sr in init_std if 'embed' in n]
print(f"""
Deviations (measured on this batch):
 (i)   entropy: Reaver sums all {len(R_NAMES)} heads' entropies unmasked (MultiPolicy.entropy); ours weights each argument
       head by whether the taken function uses it (Policy.entropy with actions), over our {len(O_NAMES)} heads. Mean
       entropy: Reaver {r_el / ENT:.4f}, ours {T['a2c_entropy']:.4f} ({r_el / ENT / T['a2c_entropy']:.2f}x). Reaver's extra heads {', '.join(EXTRA)}
       are used by no function (empty args_mask columns: {extra_unused}): only the entropy bonus trains them, and its
       gradient reaches fc through them. Neutralised (ours unmasked + those heads on our fc): agree.
 (ii)  scalar layers ({', '.join(SCREEN[i] for i in SCALAR)}): Reaver log(x + 1e-5) (0 -> {np.log(1e-5):.2f}), ours
       log1p(max(x, 0)) (0 -> 0). Same raw layers in: value max diff {dev_ii[0][0]:.3g} (rel {dev_ii[0][1]:.2g}),
       function_id logits {dev_ii[1][0]:.3g} (rel {dev_ii[1][1]:.2g}), screen logits {dev_ii[2][0]:.3g} (rel {dev_ii[2][1]:.2g}),
       neutralised loss {d_raw_loss[0]:.3g} (rel {d_raw_loss[1]:.2g}). Neutralised (Reaver fed x + 1 - 1e-5): agree.
 (iii) unavailable function ids: Reaver logit -1000, ours -1e9. Softmax identical (exp underflows to 0 in both);
       no effect on log-probs, entropy, loss or grads (every neutralised row keeps both masks as they are).
 (iv)  Adam: TF's AdamOptimizer (eps 1e-8) is the 'epsilon hat' form, lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps):
       eps/sqrt(1-b2^t) on the bias-corrected moments ({1e-8 / np.sqrt(1 - 0.999):.3g} at step 1, 1e-8 after ~10k
       steps); optax adds eps ({hp_a2c.adam_eps:g}, A2C's default; configs/sc2.gin sets 1e-8) to the corrected moments.
       Step 1 from the same (Reaver's) gradients, global norm {gnorm:.3g} (clip {CLIP_GRAD:g}, inactive):
       max |update diff| / lr = {adam['A2C.adam_eps default 1e-5'][0]:.3g} with eps 1e-5 ({100 * adam['A2C.adam_eps default 1e-5'][1]:.1f}% of weights off by > 1% of lr;
       {100 * small_g:.1f}% of the gradient entries are nonzero and below 1e-3 in size, {100 * zero_g:.1f}% exactly 0), {adam['adam_eps 1e-8 (configs/sc2.gin)'][0]:.3g} with eps 1e-8
       ({100 * adam['adam_eps 1e-8 (configs/sc2.gin)'][1]:.1f}%), {adam["adam_eps 1e-8/sqrt(1-0.999), TF's eps at step 1"][0]:.3g} with eps 1e-8/sqrt(1-0.999) ({100 * adam["adam_eps 1e-8/sqrt(1-0.999), TF's eps at step 1"][1]:.1f}%).
 (v-a) value loss: Reaver value_coef * mean((v - R)^2); ours value_coef * 0.5 * mean((v - R)^2): half Reaver's
       value gradient at equal value_coef. Neutralised (value_coef x 2 in our loss): agree.
 (v-b) embedding init: Keras 'uniform' U(-0.05, 0.05) (std ~{np.mean([e[1] for e in emb]):.3f}); Flax nn.Embed's default normal, std
       1/sqrt(10) (ours {min(e[0] for e in emb):.3f}-{max(e[0] for e in emb):.3f}): ~{np.mean([a / b for a, b in emb]):.0f}x larger. Conv/Dense kernels: both VarianceScaling(2 x
       scale, fan_in, truncated normal) with the same scales (ratios ~1 above); biases zero.
 (v-c) GAE value targets: Reaver regresses the value on n-step returns whatever gae_lambda; ours on lambda-returns
       (adv + V): max diff {d_lret[0]:.3g} here (the advantages agree). Matters only with gae_lambda < 1 (PPO).
 (v-d) advantage normalisation: std + 1e-10 (Reaver) vs + 1e-8 (ours): agrees to float32 tolerance.
 (v-e) layout only: Reaver's heads ... select_add, select_point_act ...; ours select_point_act, select_add (mapped by
       name). Reaver's fc flattens [C, H, W], ours [H, W, C] (fc kernel rows permuted in the transplant).
 (v-f) spatial heads' biases: their gradient is exactly 0 in exact arithmetic (a softmax over cells ignores a shift);
       both sides return float32 rounding noise there (checked as noise, not compared). Adam scales noise up: the
       step-1 update on these biases is {max(float(np.abs(tf_kw[k]).max()) for k in ZERO_GRAD) / LR:.2g} x lr in TF, {adam['A2C.adam_eps default 1e-5'][2]:.2g} x lr in optax with eps 1e-5, {adam['adam_eps 1e-8 (configs/sc2.gin)'][2]:.2g} x lr
       with eps 1e-8 (harmless: such a bias does not change the policy).
""")
print(f"{len(fails)} neutralised comparison(s) disagree{': ' + '; '.join(fails) if fails else ''}. "
      f"Time {time.time() - T0:.0f}s.")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if fails else 0)
