"""The fused trainer end to end: the CLI on JAX-native envs (seeds, resume, test), sharding over several devices,
bad input, and the CPU QR deadlock that multi-seed initialisation must never meet."""
import json, os, subprocess, sys, textwrap
import numpy as np
import pytest
from conftest import reaver, ROOT

TINY = ['--agent', 'a2c', '--n-envs', 4, '--gin-param', 'A2C.traj_len = 8', '--gin-param', 'SC2Settings.screen_size = 8',
        '--gin-param', 'SC2Settings.minimap_size = 8', '--gin-param', 'RunSettings.log_every = 2']

def rows(run_dir, name='metrics.jsonl'):
    return [json.loads(l) for l in (run_dir / name).read_text().splitlines()]

def test_seeds_resume_and_test(results):
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--seeds', 2, '--run-id', 'mtb',
               '--results-dir', results, *TINY)
    assert r.returncode == 0, r.stderr
    assert '2 seeds' in r.stdout and 'fused' in r.stdout
    run = results / 'mtb'
    assert rows(run)[-1]['frames'] == 128 and rows(run)[-1]['updates'] == 4
    assert all(len(s['ep_return_mean']) == 2 for s in rows(run, 'seeds.jsonl'))
    # resume: continue the same run to 256 frames per seed, from its checkpoint
    r = reaver('train', '--run-id', 'mtb', '--resume', '--steps', 256, '--results-dir', results)
    assert r.returncode == 0, r.stderr
    assert 'resumed from ckpt_0000000128' in r.stdout and rows(run)[-1]['frames'] == 256
    # test: every seed plays its episodes; the evaluation names the per-seed means
    r = reaver('test', '--run-id', 'mtb', '--episodes', 3, '--results-dir', results)
    assert r.returncode == 0, r.stderr
    ev = json.loads((run / 'evaluation.json').read_text())
    assert ev['episodes'] == 6 and len(ev['per_seed_mean']) == 2 and ev['frames'] == 256
    # compare: the evaluation next to the published MoveToBeacon scores
    r = reaver('compare', 'mtb', '--results-dir', results)
    assert r.returncode == 0, r.stderr
    assert 'MoveToBeacon' in r.stdout and '26.3 (1.8) [21, 31]' in r.stdout and 'JAX simulation' in r.stdout
    r = reaver('compare', 'not_tested', '--results-dir', results)
    assert r.returncode == 2 and 'reaver test --run-id not_tested' in r.stderr
    # export / import: the run travels as one archive and tests the same on the other side
    r = reaver('export', 'mtb', '--results-dir', results, '--out', results / 'mtb.reaver.tar.gz')
    assert r.returncode == 0, r.stderr
    other = results / 'other'
    r = reaver('import', results / 'mtb.reaver.tar.gz', '--results-dir', other, '--run-id', 'mtb2')
    assert r.returncode == 0, r.stderr
    assert json.loads((other / 'mtb2' / 'evaluation.sender.json').read_text())['returns'] == ev['returns']  # theirs
    r = reaver('test', 'mtb2', '--episodes', 3, '--results-dir', other)          # a test here keeps it as it was
    assert r.returncode == 0 and "The sender's own test" in r.stdout, (r.stdout, r.stderr)
    assert json.loads((other / 'mtb2' / 'evaluation.sender.json').read_text()) == ev
    assert json.loads((other / 'mtb2' / 'evaluation.json').read_text())['returns'] == ev['returns']  # the same play
    r = reaver('compare', 'mtb2', '--results-dir', other)
    assert r.returncode == 0 and "the sender's" in r.stdout and 'here' in r.stdout, r.stdout
    r = reaver('import', results / 'mtb.reaver.tar.gz', '--results-dir', other, '--run-id', 'mtb2')
    assert r.returncode == 2 and '--force' in r.stderr

def test_resume_after_the_simulation_changed(results):
    "A run written by an older simulation (its checkpoint's env state lacks a field) resumes the agent, fresh episodes."
    from flax import serialization
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 64, '--run-id', 'old', '--results-dir', results, *TINY)
    assert r.returncode == 0, r.stderr
    ck = sorted((results / 'old' / 'checkpoints').glob('ckpt_*.msgpack'))[-1]
    d = serialization.msgpack_restore(ck.read_bytes())
    del d['state']['envs']['env']['units']['home']          # as the simulation before patrols wrote it
    ck.write_bytes(serialization.msgpack_serialize(d))
    r = reaver('test', '--run-id', 'old', '--episodes', 2, '--results-dir', results)
    assert r.returncode == 0, r.stderr                        # test reads the weights alone
    r = reaver('train', '--run-id', 'old', '--resume', '--steps', 128, '--results-dir', results)
    assert r.returncode == 0, r.stderr
    assert 'fresh episodes' in r.stdout and rows(results / 'old')[-1]['frames'] == 128

def test_reset_heads_restarts_one_head_once(results):
    from reaver_nb.training.checkpoint import latest_checkpoint, read_checkpoint
    reset = ['--gin-param', "HeadRestart.heads = ('queued',)", '--gin-param', 'HeadRestart.at = 128',
             '--gin-param', 'HeadRestart.min_return = 0.0']   # at reset_at, whatever the return
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--run-id', 'reset', '--results-dir', results,
               *TINY, *reset)
    assert r.returncode == 0, r.stderr
    assert 'Reset the queued head(s) to uniform at 128 frames' in r.stdout
    raw = read_checkpoint(latest_checkpoint(results / 'reset' / 'checkpoints'))
    leaves = lambda tree: [(str(p), np.asarray(x)) for p, x in
                           __import__('jax').tree_util.tree_leaves_with_path(tree)]
    agent = raw['state']['agent']
    queued = [x for p, x in leaves(agent['params']) + leaves(agent['opt_state']) if 'logits_queued' in p]
    others = [x for p, x in leaves(agent['params']) if 'logits_function_id' in p or 'Conv_0' in p]
    assert len(queued) == 6 and all(not x.any() for x in queued)   # kernel, bias, and both Adam moments of each
    assert others and all(x.any() for x in others)
    # a head the agent lacks is named before anything is written; a restart past the run's frames is a silent no-op
    # in a run, and a note of the plan in a dry run
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--run-id', 'bad', '--results-dir', results,
               *TINY, '--gin-param', "HeadRestart.heads = ('queud',)", '--gin-param', 'HeadRestart.at = 500')
    assert r.returncode == 2 and "['queud']" in r.stderr and 'queued' in r.stderr and not (results / 'bad').exists()
    assert 'HeadRestart' not in r.stdout
    late = ['--gin-param', "HeadRestart.heads = ('queued',)", '--gin-param', 'HeadRestart.at = 500']
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--run-id', 'late', '--results-dir', results,
               *TINY, *late)
    assert r.returncode == 0 and 'HeadRestart' not in r.stdout and 'Reset the' not in r.stdout, r.stdout
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--results-dir', results, '--dry-run', *TINY, *late)
    assert r.returncode == 0 and '  note     HeadRestart.at = 500 is past this run' in r.stdout, r.stdout


def test_reset_heads_on_the_host_learner_and_its_resume(results):
    "The same restart on the host learner (one TrainState): once, in the checkpoint, and not again after a resume."
    import jax
    from reaver_nb.training.checkpoint import latest_checkpoint, read_checkpoint
    host = ['--gin-param', 'RunSettings.fused = False', '--gin-param', "RunSettings.vector_env = 'inprocess'",
            '--gin-param', "HeadRestart.heads = ('queued',)", '--gin-param', 'HeadRestart.at = 128',
            '--gin-param', 'HeadRestart.min_return = 0.0']
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--run-id', 'hreset', '--results-dir', results,
               *TINY, *host)
    assert r.returncode == 0, r.stderr
    assert 'Reset the queued head(s) to uniform at 128 frames' in r.stdout and '(fused' not in r.stdout
    raw = read_checkpoint(latest_checkpoint(results / 'hreset' / 'checkpoints'))
    assert np.asarray(raw['resets']).tolist() == [128]
    queued = [np.asarray(x) for p, x in jax.tree_util.tree_leaves_with_path(raw['state']['params'])
              if 'logits_queued' in str(p)]
    assert len(queued) == 2 and not any(x.any() for x in queued)
    r = reaver('train', '--run-id', 'hreset', '--resume', '--steps', 192, '--results-dir', results)
    assert r.returncode == 0, r.stderr
    assert 'Reset the' not in r.stdout and rows(results / 'hreset')[-1]['frames'] == 192
    assert np.asarray(read_checkpoint(latest_checkpoint(results / 'hreset' / 'checkpoints'))['resets']).tolist() == [128]

def test_reset_return_waits_for_each_seed_and_resumes_with_it(results):
    "With HeadRestart.min_return a seed restarts only once its return gets there; the checkpoints carry who did."
    from reaver_nb.training.checkpoint import latest_checkpoint, read_checkpoint
    wait = ['--gin-param', "HeadRestart.heads = ('queued',)", '--gin-param', 'HeadRestart.at = 64',
            '--gin-param', 'HeadRestart.min_return = 1000.0']
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 128, '--seeds', 2, '--run-id', 'wait',
               '--results-dir', results, *TINY, *wait)
    assert r.returncode == 0, r.stderr
    assert 'Reset the' not in r.stdout and 'has not reached HeadRestart.min_return = 1000' in r.stdout
    assert 'seeds 0, 1:' in r.stdout and '--run-id wait' in r.stdout and '--resume --steps 256' in r.stdout
    resets = lambda: np.asarray(read_checkpoint(latest_checkpoint(results / 'wait' / 'checkpoints'))['resets']).tolist()
    assert resets() == [-1, -1]
    # the condition met (a threshold of 0 is reset_at alone): both seeds restart at the first row after the resume,
    # one update in (a process's first chunk is one update)...
    r = reaver('train', '--run-id', 'wait', '--resume', '--steps', 192, '--results-dir', results,
               '--gin-param', 'HeadRestart.min_return = 0.0')
    assert r.returncode == 0, r.stderr
    assert 'Reset the queued head(s) to uniform at 160 frames (HeadRestart.at)' in r.stdout
    assert resets() == [160, 160]
    # ...and a later resume neither repeats nor forgets it
    r = reaver('train', '--run-id', 'wait', '--resume', '--steps', 256, '--results-dir', results,
               '--gin-param', 'HeadRestart.min_return = 0.0')
    assert r.returncode == 0, r.stderr
    assert 'Reset the' not in r.stdout and resets() == [160, 160]
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--steps', 64, '--run-id', 'neg', '--results-dir', results,
               *TINY, '--gin-param', 'HeadRestart.min_return = -1.0')
    assert r.returncode == 2 and 'HeadRestart.min_return = -1.0 is out of range' in r.stderr and not (results / 'neg').exists()

def test_reset_return_restarts_at_the_same_frame_whatever_the_log_rows(results):
    """The return test runs at fixed updates: log rows cut short (log_seconds: faster or slower machines) and a resume
    in the middle of a test window leave the restarts, and so the whole run, as they were."""
    import jax
    from reaver_nb.training.checkpoint import latest_checkpoint, read_checkpoint
    game = ['--env', 'jax:CollectMineralShards', '--seeds', 2, *TINY, '--results-dir', results,
            '--gin-param', 'SC2Settings.game_steps_per_episode = 64', '--gin-param', 'RunSettings.log_every = 4',
            '--gin-param', "HeadRestart.heads = ('queued',)", '--gin-param', 'HeadRestart.at = 64',
            '--gin-param', 'HeadRestart.min_return = 1.0',
            # the frames below come from this trajectory: Reaver's screen-head size (the map's config until 2026-12-02)
            # on the simulation's lenient settings of then (the six core functions, a one-order queue)
            '--gin-param', 'make_model.spatial_init = 0.1', '--gin-param', "MiniGameSettings.functions = 'core'",
            '--gin-param', 'MiniGameSettings.order_queue = 1']
    r = reaver('train', *game, '--steps', 512, '--run-id', 'rows4')
    assert r.returncode == 0, r.stderr
    assert 'of seed 1 to uniform at 192 frames (mean return 1.00 over the last 4 updates' in r.stdout, r.stdout
    # HeadRestart.every, when set, is the test's step whatever log_every is: the same restart, the same run
    every = ['--gin-param', 'RunSettings.log_every = 20', '--gin-param', 'HeadRestart.every = 4']
    r = reaver('train', *game, *every, '--steps', 512, '--run-id', 'every4')
    assert r.returncode == 0, r.stderr
    assert 'of seed 1 to uniform at 192 frames (mean return 1.00 over the last 4 updates' in r.stdout, r.stdout
    one = ['--gin-param', 'RunSettings.log_seconds = 1e-6']          # a row (a chunk) per update
    r = reaver('train', *game, *one, '--steps', 160, '--run-id', 'rows1')   # stops inside the window 192 closes
    assert r.returncode == 0 and 'Reset the' not in r.stdout, r.stderr
    r = reaver('train', '--run-id', 'rows1', '--resume', '--steps', 512, '--results-dir', results, *one)
    assert r.returncode == 0, r.stderr
    assert 'of seed 1 to uniform at 192 frames' in r.stdout, r.stdout
    a, b, c = (read_checkpoint(latest_checkpoint(results / run / 'checkpoints')) for run in ('rows4', 'rows1', 'every4'))
    assert [np.asarray(x['resets']).tolist() for x in (a, b, c)] == [[-1, 192]] * 3
    leaves = lambda t: jax.tree.leaves(t['state']['agent']['params'])
    assert all(np.array_equal(x, y) and np.array_equal(x, z) for x, y, z in zip(leaves(a), leaves(b), leaves(c)))

def test_gymnax_cartpole_through_the_same_trainer(results):
    r = reaver('train', '--env', 'gymnax:CartPole-v1', '--steps', 4096, '--n-envs', 8, '--run-id', 'cp',
               '--results-dir', results)
    assert r.returncode == 0, r.stderr
    assert 'PPO on gymnax:CartPole-v1 (fused' in r.stdout
    assert rows(results / 'cp')[-1]['frames'] == 4096

def test_bad_input_is_named(results):
    r = reaver('train', '--env', 'CartPole-v1', '--seeds', 2, '--steps', 512, '--results-dir', results)
    assert r.returncode == 2 and 'JAX-native env' in r.stderr and not results.exists()
    r = reaver('train', '--env', 'jax:MoveToBeacon', '--seeds', 0, '--results-dir', results)
    assert r.returncode == 2 and 'RunSettings.n_seeds = 0 is out of range' in r.stderr and '--seeds' in r.stderr
    r = reaver('train', '--env', 'jax:MoveToBacon', '--results-dir', results)
    assert r.returncode == 2 and 'jax:MoveToBeacon' in r.stderr

def _python(code, timeout, env=None):
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})

def test_sharding_over_four_cpu_devices():
    "Seeds (4 of them) or envs (1 seed) split over 4 devices train as they do on one."
    code = '''
        import jax, numpy as np
        assert len(jax.devices()) == 4, jax.devices()
        from reaver_nb.envs.sim import MoveToBeacon
        from reaver_nb.agents.actor_critic import ActorCriticAgent, A2C
        from reaver_nb.training.fused import FusedTrainer
        env = MoveToBeacon(screen_size=8, minimap_size=8, screen_features=('player_relative',), minimap_features=())
        agent = ActorCriticAgent(env.obs_spec, env.act_spec, A2C(traj_len=4), 4, None)
        for seeds, how in ((4, 'seeds split over 4 devices'), (1, 'envs split over 4 devices')):
            many = FusedTrainer(env, agent, 4, seeds)
            one = FusedTrainer(env, agent, 4, seeds, devices=jax.devices()[:1])
            c = many.init(3)
            assert many.sharding(c) == how, many.sharding(c)
            a, _, _ = many.run(c, 2)
            b, _, _ = one.run(one.init(3), 2)
            assert len(a.envs.ret.sharding.device_set) == 4
            for x, y in zip(jax.tree.leaves(a.agent.params), jax.tree.leaves(b.agent.params)):
                np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-3, atol=2e-4)
        print('ok')
    '''
    r = _python(code, 600, {'XLA_FLAGS': '--xla_force_host_platform_device_count=4', 'JAX_PLATFORMS': 'cpu'})
    assert r.returncode == 0 and 'ok' in r.stdout, r.stderr[-3000:]

def test_multi_seed_init_never_meets_the_cpu_qr_deadlock():
    """Orthogonal initialisers are QR decompositions; batched QRs run concurrently can hang the CPU backend forever
    (../shared/DESIGN.md). Eight seeds of an orthogonally initialised MLP, initialised ten times through the fused
    trainer: a hang fails this test by its timeout instead of hanging the suite."""
    code = '''
        import jax
        from reaver_nb.envs.jax_envs import make_jax_env
        from reaver_nb.agents.actor_critic import ActorCriticAgent, PPO
        from reaver_nb.training.fused import FusedTrainer
        env = make_jax_env('gymnax:CartPole-v1')
        agent = ActorCriticAgent(env.obs_spec, env.act_spec, PPO(traj_len=8, minibatch_size=32), 8, None)
        tr = FusedTrainer(env, agent, 8, n_seeds=8)
        for i in range(10): jax.block_until_ready(tr.init(i))
        print('ok')
    '''
    try: r = _python(code, 240)
    except subprocess.TimeoutExpired:
        pytest.fail('multi-seed initialisation hung for 240 s: the batched-QR deadlock is back (init under vmap?)')
    assert r.returncode == 0 and 'ok' in r.stdout, r.stderr[-3000:]

def test_compiled_programs_are_kept_and_change_nothing(results, tmp_path):
    "A run writes its compiled programs to the cache folder; the next run of the same config loads them, same numbers."
    cache = tmp_path / 'programs'
    env = {**os.environ, 'REAVER_NB_COMPILATION_CACHE': str(cache)}
    env.pop('JAX_COMPILATION_CACHE_DIR', None)
    args = ['--env', 'jax:MoveToBeacon', '--steps', 64, '--results-dir', results, *TINY]
    r = reaver('train', *args, '--run-id', 'first', env=env)
    assert r.returncode == 0, r.stderr
    programs = sorted(p.name for p in cache.glob('*-cache'))
    assert programs, f"nothing cached in {cache}"
    r = reaver('train', *args, '--run-id', 'second', env=env)
    assert r.returncode == 0, r.stderr
    assert 'Error reading persistent compilation cache' not in r.stderr
    assert sorted(p.name for p in cache.glob('*-cache')) == programs        # every program found, none compiled anew
    timing = ('time', 'fps', 'env_steps_per_s')
    strip = lambda run: [{k: v for k, v in row.items() if k not in timing} for row in rows(results / run)]
    assert strip('first') == strip('second')

def test_impala_on_the_fused_path_learns_by_v_trace():
    """`--agent impala` without Ray: the fused trainer runs IMPALA's own update (V-trace), which on-policy is A2C's on
    n-step returns (λ = 1). Before 2026-12-05 it ran A2C's update with GAE on IMPALA's unused `gae_lambda` (0.95)."""
    import dataclasses, jax
    from reaver_nb.agents.actor_critic import ActorCriticAgent, A2C, IMPALA
    from reaver_nb.envs.jax_envs import make_jax_env
    from reaver_nb.training.fused import FusedTrainer
    env = make_jax_env('gymnax:CartPole-v1')
    impala = IMPALA(normalize_advantages=True)
    common = {f.name: getattr(impala, f.name) for f in dataclasses.fields(A2C)}
    trained = {}
    for name, hp in [('impala', impala), ('a2c_nstep', A2C(**dict(common, gae_lambda=1.0))),
                     ('a2c_gae', A2C(**dict(common, gae_lambda=impala.gae_lambda)))]:
        trainer = FusedTrainer(env, ActorCriticAgent(env.obs_spec, env.act_spec, hp, 8), 8)
        trained[name] = trainer.run(trainer.init(0), 2)[0].agent.params
    same = lambda a, b: all(np.allclose(x, y, atol=1e-5) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
    assert same(trained['impala'], trained['a2c_nstep'])
    assert not same(trained['impala'], trained['a2c_gae'])


@pytest.mark.parametrize('name', ['MoveToBeacon', 'FindAndDefeatZerglings', 'CartPole-v1'])
def test_only_the_finished_envs_are_reset_exactly_as_a_reset_of_all(name):
    "`vec_step`'s reset (none, the few done envs, or all) against resetting every env and keeping the done ones'; seeds side by side (`vmap`) too."
    import jax, jax.numpy as jnp
    from reaver_nb.training import fused
    from reaver_nb.envs.sim import MINIGAMES
    from reaver_nb.envs.jax_envs import GymnaxEnv
    env = MINIGAMES[name]() if name in MINIGAMES else GymnaxEnv(name)
    n, key = 32, jax.random.PRNGKey(7)                                  # n // 16 = 2: at most 2 done is "few"
    obs, st = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(0), n))
    obs0, st0 = jax.vmap(env.reset)(jax.random.split(key, n))
    with_obs = None if hasattr(env, 'observe') else obs
    reset = jax.jit(lambda d, s, o: fused._reset_done(env, key, d, s, o))
    # equal, floats to a few ulps: XLA:CPU computes a sine for a batch of 2 and one of 32 by different code, and
    # FindAndDefeatZerglings' first zergling stands on a circle (1 ulp apart, measured)
    same = lambda a, b: all(np.allclose(x, y, rtol=0, atol=1e-5) if jnp.issubdtype(x.dtype, jnp.floating)
                            else bool((x == y).all()) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
    for rows in ([], [5], [0, 31], [3, 9, 30], list(range(n))):
        done = jnp.zeros(n, bool).at[jnp.asarray(rows, jnp.int32)].set(True)
        got_st, got_obs = reset(done, st, with_obs)
        assert same(got_st, fused._where(done, st0, st)), rows
        if with_obs is not None: assert same(got_obs, fused._where(done, obs0, obs)), rows
    seeds = jnp.stack([jnp.zeros(n, bool).at[4].set(True), jnp.ones(n, bool)])
    both = jax.tree.map(lambda x: jnp.stack([x, x]), st)
    got = jax.jit(jax.vmap(lambda d, s: fused._reset_done(env, key, d, s)[0]))(seeds, both)
    for k in range(2):
        assert same(jax.tree.map(lambda x: x[k], got), fused._where(seeds[k], st0, st))
