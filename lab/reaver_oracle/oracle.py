"""Oracle probe: Reaver 2.1.9's own TF A2C agent (its packaged sc2 base.gin + MoveToBeacon.gin) trained on reaver_nb's
JAX MoveToBeacon (or, with --map, another of its JAX mini-games), optionally patched toward the game (beacon drawn r, reach, game function set, 16-slot queue).

Setup: the oracle venv of README.md (requirements.txt, then pip install -e <checkout> --no-deps); from the checkout:
    $ORACLE_VENV/bin/python lab/reaver_oracle/oracle.py --frames 700000 --beacon-r 1.875 --reach 1.25 --functions game --queue 16

Copied from shared/tools/reaver_oracle/oracle.py (the project's oracle probe, issue 28 part 1). Changed: this docstring,
and --beacon-r goes through MiniGameOptions.beacon_radius where the simulation has that setting (a game then copies
its radii at construction, so patching KIND no longer reaches it); the printed radius is the game's own; --map (issue
30: Reaver's agent on the other maps, e.g. --map FindAndDefeatZerglings).
"""
import argparse, dataclasses, os, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaver_shim  # noqa: F401
ap = argparse.ArgumentParser()
ap.add_argument('--frames', type=int, default=600_000)
ap.add_argument('--map', default='MoveToBeacon', help="any of reaver_nb's seven JAX mini-games; Reaver's packaged <map>.gin "
                "over its base.gin, base.gin alone where Reaver packages none (the MoveToBeacon-only flags "
                "--beacon-r, --reach, --follows, --candidates and --era 2018-11-19 need MoveToBeacon)")
ap.add_argument('--n-envs', type=int, default=32)
ap.add_argument('--beacon-r', type=float, default=None)
ap.add_argument('--reach', type=float, default=None)
ap.add_argument('--functions', default='game', choices=['game', 'core', '2018', 'minigames_all'],
                help="the simulation's MiniGameSettings.functions; 2018: also Reaver's function set of 2018-11-19 "
                     "(SC2Env.action_ids at ef2fb8a, 20 ids with Stop_quick and HoldPosition_quick) for both sides, "
                     "simulated with the game's set (pair with --candidates stop_hold). minigames_all: Reaver's 41-id "
                     "'minigames_all' set for both sides, passed as ids (2.1.9's SC2Env turns the name into its 23-id "
                     "'minigames' set, which lacks Train_Marine_quick, so BuildMarines cannot be scored with it); "
                     "reaver_nb's configs use it on the economy maps")
ap.add_argument('--queue', type=int, default=16)
ap.add_argument('--follows', action='store_true',
                help="MiniGameSettings.move_follows: a Move_screen/Smart_screen click on the beacon follows it (after it "
                     "jumps too), as a move onto a unit does in the game's interface")
ap.add_argument('--data-format', default='channels_first')
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--layers', default='2.1.9', choices=['2.1.9', '2018'],
                help="2.1.9: the released SC2Env's 5 screen + 4 minimap layers; 2018: the 7 + 3 of Reaver's SC2Env at "
                     "commit ef2fb8a (player_id, unit_hit_points and unit_density_aa drawn by candidates.layers_2018)")
ap.add_argument('--trace', type=int, default=1, help='print every one of the first TRACE updates')
ap.add_argument('--candidates', default='', help="comma-separated candidate mechanics of candidates.py to patch in "
                "(deselect, beacon_select, beacon_hp)")
ap.add_argument('--era', default='2.1.9', choices=['2.1.9', '2018-11-19'],
                help="2.1.9: the released agent and its packaged MoveToBeacon.gin (commit ac7850f). 2018-11-19: the "
                     "agent as it was when Reaver's README first reported 26.30 (1.88) in 563,200 samples (commit "
                     "ef2fb8a): FullyConv with embeddings of round(log2(dim)) channels, Keras' default initialisers "
                     "everywhere (no 0.1-scaled heads), log(x + 1e-10) for scalar layers; move_to_beacon.gin of then "
                     "(lr 5e-4, entropy 0.001, clip 10, n-step returns, no advantage normalisation) and run.py's "
                     "defaults (4 envs, batch 500: 125 steps per env per update). The feature layers and function set "
                     "stay 2.1.9's (the simulation renders those).")
a = ap.parse_args()
if a.map != 'MoveToBeacon' and (a.beacon_r is not None or a.reach is not None or a.follows or a.candidates
                                or a.era != '2.1.9' or a.functions == '2018' or a.layers != '2.1.9'):
    ap.error('--beacon-r, --reach, --follows, --candidates, --era, --functions 2018 and --layers 2018 are MoveToBeacon '
             'probes; drop them with --map ' + a.map)
if a.era != '2.1.9' and a.n_envs == 32: a.n_envs = 4

import numpy as np, jax, jax.numpy as jnp, gin
import tensorflow.compat.v1 as tf
tf.disable_eager_execution(); tf.disable_v2_behavior()
tf.set_random_seed(a.seed); np.random.seed(a.seed)   # Reaver's initial weights, per seed
import reaver as rvr
import reaver_nb.envs.sim as mg
if a.map not in mg.MINIGAMES: ap.error(f"--map {a.map!r}: choose one of {', '.join(mg.MINIGAMES)}")
import candidates
patched = candidates.apply([c for c in a.candidates.split(',') if c])
FUNCTIONS_2018 = (0, 1, 2, 3, 4, 6, 7, 12, 13, 140, 168, 261, 274, 331, 332, 333, 334, 451, 452, 453)
# Reaver 2.1.9's envs/sc2.py: the 23 'minigames' ids, then the 18 that 'minigames_all' adds
MINIGAMES_ALL = (0, 1, 2, 3, 4, 6, 7, 12, 13, 42, 44, 50, 91, 183, 234, 309, 331, 332, 333, 334, 451, 452, 490,
                 11, 71, 72, 73, 74, 79, 140, 168, 239, 261, 264, 269, 274, 318, 335, 336, 453, 477)
IDS = {'2018': FUNCTIONS_2018, 'minigames_all': MINIGAMES_ALL}.get(a.functions)
sim_kw = dict(functions='game' if IDS else a.functions, order_queue=a.queue, move_follows=a.follows)
if a.beacon_r is not None:
    if 'beacon_radius' in {f.name for f in dataclasses.fields(mg.MiniGameOptions)}: sim_kw['beacon_radius'] = a.beacon_r
    else: mg.KIND['radius'][mg.BEACON] = a.beacon_r
if a.reach is not None: mg.MoveToBeacon.reach = a.reach

cfg_dir = os.path.join(os.path.dirname(rvr.__file__), 'configs', 'sc2')
# Reaver 2.1.9 packages MoveToBeacon.gin and FindAndDefeatZerglings.gin only; any other map trains on base.gin alone,
# as Reaver's own `python -m reaver.run --env <map>` does when no <map>.gin exists
GIN_FILES = [os.path.join(cfg_dir, f) for f in ('base.gin', f'{a.map}.gin') if os.path.exists(os.path.join(cfg_dir, f))]
print('Reaver configs:', ', '.join(os.path.basename(f) for f in GIN_FILES), flush=True)
gin.parse_config_files_and_bindings(GIN_FILES, [f"build_fully_conv.data_format = '{a.data_format}'"])
if a.era == '2018-11-19':
    from tensorflow.compat.v1.keras import Model
    from tensorflow.compat.v1.keras.layers import Input, Dense, Embedding, Conv2D, Flatten, Lambda

    def build_fully_conv_2018(obs_spec, act_spec, data_format='channels_first'):
        "Reaver's FullyConv at commit ef2fb8a (2018-11-19), written again on 2.1.9's Keras: see --era."
        cfg = dict(padding='same', data_format=data_format)
        def spatial_block(space):
            inpt = Input(space.shape)
            block = tf.split(inpt, space.shape[0], axis=1)
            for i, dim in enumerate(space.spatial_dims):
                if dim > 1:
                    x = tf.squeeze(block[i], axis=1)
                    x = Embedding(input_dim=dim, output_dim=int(max(1, round(np.log2(dim)))))(x)
                    block[i] = tf.transpose(x, perm=[0, 3, 1, 2])
                else: block[i] = tf.log(block[i] + 1e-10)
            x = tf.concat(block, axis=1)
            x = Conv2D(16, 5, activation='relu', **cfg)(x)
            return Conv2D(32, 3, activation='relu', **cfg)(x), inpt
        screen, screen_in = spatial_block(obs_spec.spaces[0])
        minimap, minimap_in = spatial_block(obs_spec.spaces[1])
        non_spatial = [Input(s.shape) for s in obs_spec.spaces[2:]]
        state = tf.concat([screen, minimap], axis=1)
        fc = Dense(256, activation='relu')(Flatten()(state))
        value = tf.squeeze(Dense(1)(fc), axis=-1)
        logits = [Flatten()(Conv2D(1, 1, **cfg)(state)) if s.is_spatial() else Dense(s.size())(fc) for s in act_spec]
        logits[0] = Lambda(lambda x: tf.where(non_spatial[0] > 0, x, -1000 * tf.ones_like(x)))(logits[0])
        return Model(inputs=[screen_in, minimap_in] + non_spatial, outputs=logits + [value])

    for k, v in (('ACAgent.model_fn', build_fully_conv_2018), ('ACAgent.entropy_coef', 0.001),
                 ('ACAgent.clip_grads_norm', 10.0), ('ACAgent.normalize_advantages', False),
                 ('ACAgent.gae_lambda', 0.0), ('ACAgent.batch_sz', a.n_envs), ('ACAgent.traj_len', 500 // a.n_envs),
                 ('tf.train.AdamOptimizer.learning_rate', 0.0005)):
        with gin.unlock_config(): gin.bind_parameter(k, v)
SCREEN = ('player_relative', 'selected', 'visibility_map', 'unit_hit_points_ratio', 'unit_density')
MINIMAP = ('player_relative', 'selected', 'visibility_map', 'camera')
if a.layers == '2018':
    SCREEN, MINIMAP = candidates.SCREEN_2018, candidates.MINIMAP_2018
    candidates.layers_2018()
fn_kw = dict(functions=IDS) if IDS else {}
try: SPATIAL = gin.query_parameter('SC2Env.spatial_dim')   # FindAndDefeatZerglings.gin: 32
except ValueError: SPATIAL = 16
g = mg.MINIGAMES[a.map](screen_size=SPATIAL, minimap_size=SPATIAL, screen_features=SCREEN, minimap_features=MINIMAP, sim=mg.MiniGameOptions(**sim_kw), **fn_kw)
beacon_r = float(np.asarray(getattr(g, 'radius', mg.KIND['radius']))[mg.BEACON])
ref = rvr.envs.SC2Env(a.map, spatial_dim=SPATIAL, step_mul=8, **({'action_ids': list(IDS)} if IDS else {}), obs_features=dict(
    screen=list(SCREEN), minimap=list(MINIMAP), **{'non-spatial': ['available_actions', 'player']}))
obs_spec, act_spec = ref.obs_spec(), ref.act_spec()
assert list(g.function_ids) == list(ref.act_wrapper.func_ids), (g.function_ids, ref.act_wrapper.func_ids)
our_names = [s.name for s in g.act_spec]
reaver_names = [s.name for s in act_spec.spaces]
N = a.n_envs

def to_reaver(obs):
    ns, nm = len(SCREEN), len(MINIMAP)
    screen = jnp.stack(obs[:ns], 1).astype(jnp.int32)
    minimap = jnp.stack(obs[ns:ns + nm], 1).astype(jnp.int32)
    return screen, minimap, obs[ns + nm].astype(jnp.int32), obs[ns + nm + 1].astype(jnp.int32)

@jax.jit
def reset(key):
    obs, s = jax.vmap(g.reset)(jax.random.split(key, N))
    return to_reaver(obs), s

@jax.jit
def step(key, s, action):
    k1, k2 = jax.random.split(key)
    obs, s2, r, term, trunc = jax.vmap(g.step)(jax.random.split(k1, N), s, action)
    done = term | trunc
    obs0, s0 = jax.vmap(g.reset)(jax.random.split(k2, N))
    sel = lambda x, y: jnp.where(done.reshape((-1,) + (1,) * (x.ndim - 1)), x, y)
    s = jax.tree.map(sel, s0, s2); obs = jax.tree.map(sel, obs0, obs)
    return to_reaver(obs), s, r, done, s2.score

class SimEnv(rvr.envs.base.Env):
    def __init__(self): super().__init__('jax:' + a.map); self.key = jax.random.PRNGKey(a.seed)
    def start(self): pass
    def stop(self): pass
    def obs_spec(self): return obs_spec
    def act_spec(self): return act_spec
    def reset(self):
        self.key, k = jax.random.split(self.key)
        obs, self.s = reset(k)
        return [np.asarray(o) for o in obs], None, None
    def step(self, action):
        byname = dict(zip(reaver_names, action))
        fn = np.asarray(g.function_ids)[np.asarray(byname['function_id'])]
        calls.append((np.mean(fn == 0), np.mean(np.isin(fn, MOVERS)), np.mean(np.asarray(byname['queued']) == 1)))
        act = tuple(jnp.asarray(np.asarray(byname[n]), jnp.int32) for n in our_names)
        self.key, k = jax.random.split(self.key)
        obs, self.s, r, done, score = step(k, self.s, act)
        done = np.asarray(done)
        for sc in np.asarray(score)[done]: episodes.append(float(sc))
        return [np.asarray(o) for o in obs], np.asarray(r, np.float32), done

episodes = []
calls = []   # per step: share of no_op calls, of calls that move the marine, of queued=1 (argument sampled)
MOVERS = (12, 13, 331, 332, 333, 334, 451, 452)
sess = tf.Session()
sess_mgr = rvr.utils.tensorflow.SessionManager(sess, tempfile.mkdtemp(), 10 ** 9, training_enabled=True)
agent = rvr.agents.A2C(obs_spec, act_spec, sess_mgr=sess_mgr, n_envs=N)
class Quiet:   # Reaver's logger interface, printing our own row every 20 updates
    def __init__(self): self.t0 = time.time(); self.u = 0; self.terms = []
    def on_start(self): pass
    def on_finish(self): pass
    def on_step(self, *args, **kw): pass
    def on_update(self, step, loss_terms, grads_norm, *args, **kw):
        self.u += 1
        self.terms.append((*loss_terms, grads_norm))
        if self.u % 20 == 0 or self.u <= a.trace:
            last = episodes[-100:]
            print(f"upd {self.u} frames {self.u * agent.traj_len * agent.batch_sz} eps {len(episodes)} "
                  f"RMe {np.mean(last) if last else float('nan'):.2f} RMa {max(last) if last else float('nan'):.0f} "
                  f"no_op {np.mean([c[0] for c in calls[-2000:]]):.2f} move {np.mean([c[1] for c in calls[-2000:]]):.2f} "
                  f"queued {np.mean([c[2] for c in calls[-2000:]]):.2f} "
                  + ' '.join(f"{k} {v:.4f}" for k, v in zip(('Pl', 'Vl', 'El', 'Gr'), np.mean(self.terms[-(20 if self.u % 20 == 0 else 1):], 0)))
                  + f" t {time.time() - self.t0:.0f}s", flush=True)
agent.logger = Quiet()
agent.wrap_env = lambda env: env
print(f"map {a.map}, era {a.era}: Reaver {rvr.__version__ if hasattr(rvr, '__version__') else '2.1.9'} A2C, lr/entropy from packaged gin: "
      f"entropy {gin.query_parameter('ACAgent.entropy_coef')}, clip {gin.query_parameter('ACAgent.clip_grads_norm')}, "
      f"batch {gin.query_parameter('ACAgent.batch_sz')}x{gin.query_parameter('ACAgent.traj_len')}; sim beacon r "
      f"{beacon_r}, reach {getattr(g, 'reach', '-')}, functions {a.functions}, spatial {SPATIAL}, queue {a.queue}, follows {a.follows}, layers {a.layers}, candidates {patched}, seed {a.seed}", flush=True)
agent.run(SimEnv(), a.frames // N)
