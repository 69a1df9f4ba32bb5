#!/usr/bin/env python
"""PPO training throughput on CartPole-v1: reaver_nb against Stable-Baselines3 (PyTorch) and sbx (JAX).

Each (learner, repeat) runs in a fresh Python subprocess, so every run pays its own imports and JIT compilation, no
learner warms a cache for another, and the three never share a process or thread pool. The runs are interleaved
(reaver, sb3, sbx, then rotated) so that drift in the machine's load is spread over all three.

Two numbers per run:
  * steady steps/s (the headline): env steps / wall-clock seconds from the end of update W (the warm-up) to the end of
    the last update. It includes env stepping, action sampling, GAE and the SGD epochs, and each learner's own
    per-update bookkeeping; it excludes imports, env and model construction, the first W updates (JIT compilation of
    reaver_nb and sbx, PyTorch's first-call allocations) and reaver_nb's final checkpoint.
  * whole-run steps/s: env steps / seconds of the whole `train(...)` call (reaver_nb) or `PPO(...)` + `learn(...)`
    (SB3, sbx): everything above plus construction, compilation and reaver_nb's run directory and final checkpoint.

    python bench/learner.py --steps 100000 --repeats 3
    python bench/learner.py --steps 20000 --repeats 1 --only reaver,sbx

The peers come from the `bench` extra: pip install -e ".[bench]" (see bench/README.md).
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time
from importlib import metadata

ENV_ID = 'CartPole-v1'
LEARNERS = ('reaver', 'sb3', 'sbx')
NAMES = {'reaver': 'reaver_nb', 'sb3': 'SB3 (torch)', 'sbx': 'sbx (jax)'}
INSTALL_HINT = 'pip install -e ".[bench]"'
MARK = 'BENCH_RESULT '
# The goals this benchmark checks: reaver_nb's steady steps/s over each peer's.
GOALS = {'sb3': 3.0, 'sbx': 1.0}

# Shared PPO hyper-parameters (rl-baselines3-zoo's CartPole-v1 PPO, with a constant learning rate and clip range).
HP = dict(lr=1e-3, gamma=0.98, gae_lambda=0.8, ent_coef=0.0, clip_range=0.2, vf_coef=0.5, max_grad_norm=0.5,
          adam_eps=1e-5, hidden=(64, 64))


# ----------------------------------------------------------------------------------------------------------- workers
def _marks_to_result(frames_warm, t_warm, frames_end, t_end, total_s, frames, ret):
    steady_frames, steady_s = frames_end - frames_warm, t_end - t_warm
    return dict(frames=int(frames), total_s=total_s, steady_frames=int(steady_frames), steady_s=steady_s,
                warmup_s=t_warm, sps=steady_frames / steady_s, sps_total=frames / total_s, ret=ret)


def run_reaver(a) -> dict:
    import reaver_nb
    import reaver_nb.training.run, tensorboardX   # train() imports these lazily; SB3 and sbx import theirs up front
    batch = a.traj_len * a.n_envs
    gin_params = [
        f"PPO.traj_len = {a.traj_len}", f"PPO.n_epochs = {a.epochs}", f"PPO.minibatch_size = {a.minibatch}",
        f"PPO.learning_rate = {HP['lr']}", "PPO.lr_schedule = 'constant'", f"PPO.adam_eps = {HP['adam_eps']}",
        f"PPO.discount = {HP['gamma']}", f"PPO.gae_lambda = {HP['gae_lambda']}",
        f"PPO.entropy_coef = {HP['ent_coef']}", f"PPO.clip_ratio = {HP['clip_range']}", "PPO.clip_value = 0.0",
        # reaver_nb's value loss is value_coef * 0.5 * MSE, SB3's and sbx's vf_coef * MSE: 2 * vf_coef is the same loss.
        f"PPO.value_coef = {2 * HP['vf_coef']}", f"PPO.max_grad_norm = {HP['max_grad_norm']}",
        "PPO.normalize_advantages = True", "PPO.normalize_returns = False", "PPO.clip_rewards = 0.0",
        f"make_model.hidden = {tuple(HP['hidden'])}", "make_model.activation = 'tanh'",
        "make_model.shared_torso = False",
        # A log row after update W marks the end of the warm-up; rows then come every W updates, as reaver_nb logs.
        f"RunSettings.log_every = {a.warmup_updates}", "RunSettings.checkpoint_every = 1000000000"]
    # Settings that only some versions of reaver_nb have: bind those this one knows.
    from dataclasses import fields
    from reaver_nb.training.config import RunSettings
    known = {f.name for f in fields(RunSettings)}
    if 'checkpoint_minutes' in known: gin_params.append("RunSettings.checkpoint_minutes = 1e9")
    if 'log_seconds' in known: gin_params.append("RunSettings.log_seconds = 1e9")   # rows only every W updates
    if 'vector_env' in known: gin_params.append(f"RunSettings.vector_env = {a.reaver_vec_env!r}")
    elif a.reaver_vec_env != 'inprocess':
        raise SystemExit(f"this reaver_nb has only the in-process vector env, not --reaver-vec-env {a.reaver_vec_env}")
    rows = []
    with tempfile.TemporaryDirectory(prefix='reaver_bench_') as d:
        t0 = time.time()
        res = reaver_nb.train(ENV_ID, 'ppo', n_envs=a.n_envs, steps=a.steps, seed=a.seed, run_id='bench',
                              results_dir=d, verbose=False, gin_params=gin_params,
                              callbacks=[lambda row: rows.append((row['frames'], row['time']))])
        total_s = time.time() - t0
    # row['time'] and res['time'] are seconds since train() made its logger (after env and model construction,
    # before the first update); res['time'] is taken after the final checkpoint, just before train() returns.
    setup_s = total_s - res['time']
    warm = next(r for r in rows if r[0] == a.warmup_updates * batch)
    last = rows[-1]
    ret = (res.get('last') or {}).get('ep_return_mean')
    return _marks_to_result(warm[0], setup_s + warm[1], last[0], setup_s + last[1], total_s, res['frames'], ret) \
        | dict(vec_env=a.reaver_vec_env)


def _sb3_like(a, PPO, policy_kwargs) -> dict:
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.callbacks import BaseCallback
    batch = a.traj_len * a.n_envs

    class Mark(BaseCallback):
        "Time at the start of the rollout after update W, i.e. when the warm-up updates are done."
        t = frames = None
        def _on_rollout_start(self):
            if self.t is None and self.model.num_timesteps >= a.warmup_updates * batch:
                self.t, self.frames = time.perf_counter(), self.model.num_timesteps
        def _on_step(self): return True

    mark = Mark()
    t0 = time.perf_counter()
    env = make_vec_env(ENV_ID, n_envs=a.n_envs, seed=a.seed)   # DummyVecEnv of Monitor-wrapped envs, in-process
    model = PPO('MlpPolicy', env, n_steps=a.traj_len, batch_size=a.minibatch, n_epochs=a.epochs,
                learning_rate=HP['lr'], gamma=HP['gamma'], gae_lambda=HP['gae_lambda'], ent_coef=HP['ent_coef'],
                clip_range=HP['clip_range'], clip_range_vf=None, normalize_advantage=True, vf_coef=HP['vf_coef'],
                max_grad_norm=HP['max_grad_norm'], policy_kwargs=policy_kwargs, device='cpu', seed=a.seed,
                verbose=0)
    model.learn(total_timesteps=a.steps, callback=mark)
    t_end = time.perf_counter()
    env.close()
    eps = [ep['r'] for ep in model.ep_info_buffer]
    ret = sum(eps) / len(eps) if eps else None
    return _marks_to_result(mark.frames, mark.t - t0, model.num_timesteps, t_end - t0, t_end - t0,
                            model.num_timesteps, ret)


def _torch_threads(a):
    import torch
    torch.set_num_threads(a.torch_threads)
    return torch.get_num_threads()


def run_sb3(a) -> dict:
    threads = _torch_threads(a)
    import torch
    from stable_baselines3 import PPO
    kw = dict(net_arch=dict(pi=list(HP['hidden']), vf=list(HP['hidden'])), activation_fn=torch.nn.Tanh,
              ortho_init=True, share_features_extractor=True)   # the extractor is a parameter-free Flatten
    return _sb3_like(a, PPO, kw) | dict(torch_threads=threads)


def run_sbx(a) -> dict:
    threads = _torch_threads(a)   # sbx's rollout buffer is SB3's, in torch tensors
    import flax.linen as nn
    from sbx import PPO
    kw = dict(net_arch=dict(pi=list(HP['hidden']), vf=list(HP['hidden'])), activation_fn=nn.tanh, ortho_init=True)
    return _sb3_like(a, PPO, kw) | dict(torch_threads=threads)


def worker(a):
    fn = dict(reaver=run_reaver, sb3=run_sb3, sbx=run_sbx)[a.worker]
    try: out = fn(a)
    except ImportError as e: out = dict(skip=f"{type(e).__name__}: {e}")
    if 'skip' not in out and a.worker != 'sb3':
        import jax
        out['jax_device'] = str(jax.devices()[0])
    print(MARK + json.dumps(out), flush=True)


# ------------------------------------------------------------------------------------------------------------ driver
def version(dist):
    try: return metadata.version(dist)
    except metadata.PackageNotFoundError: return 'not installed'


def run_one(learner, a, env):
    cmd = [sys.executable, os.path.abspath(__file__), '--worker', learner, '--steps', str(a.steps), '--n-envs',
           str(a.n_envs), '--traj-len', str(a.traj_len), '--epochs', str(a.epochs), '--minibatch', str(a.minibatch),
           '--warmup-updates', str(a.warmup_updates), '--seed', str(a.seed), '--torch-threads', str(a.torch_threads),
           '--reaver-vec-env', a.reaver_vec_env]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [l for l in p.stdout.splitlines() if l.startswith(MARK)]
    if p.returncode or not lines:
        tail = '\n'.join((p.stdout + p.stderr).strip().splitlines()[-25:])
        return dict(error=f"worker exited with {p.returncode}:\n{tail}")
    return json.loads(lines[-1][len(MARK):])


def fmt_sps(x): return f"{x:,.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--steps', type=int, default=100_000, help='env steps per run, rounded down to whole updates')
    ap.add_argument('--repeats', type=int, default=3, help='runs per learner; the table shows their median')
    ap.add_argument('--n-envs', type=int, default=8)
    ap.add_argument('--traj-len', type=int, default=32, help='steps per env per update (SB3: n_steps)')
    ap.add_argument('--epochs', type=int, default=20)
    ap.add_argument('--minibatch', type=int, default=256, help='minibatch size (SB3: batch_size)')
    ap.add_argument('--warmup-updates', type=int, default=None,
                    help='updates left out of the steady rate (default: a tenth of the run, at least 3)')
    ap.add_argument('--only', default=','.join(LEARNERS), help='comma-separated subset of reaver,sb3,sbx')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--torch-threads', type=int, default=os.cpu_count() or 1,
                    help='torch.set_num_threads for the SB3 and sbx runs (default: os.cpu_count())')
    ap.add_argument('--reaver-vec-env', default='inprocess', choices=('inprocess', 'shm'),
                    help="reaver_nb's vector env (RunSettings.vector_env, where this reaver_nb has it): 'inprocess' "
                         "(default) steps the envs in the learner's process like SB3's DummyVecEnv; 'shm' uses "
                         "worker processes, which the peers here do not")
    ap.add_argument('--jax-platform', default='cpu',
                    help="JAX_PLATFORMS for reaver_nb and sbx (default cpu, like SB3's device='cpu'; '' = JAX's choice)")
    ap.add_argument('--json', help='also write the results to this file')
    ap.add_argument('--worker', choices=LEARNERS, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker: return worker(a)

    only = [s.strip() for s in a.only.split(',') if s.strip()]
    bad = [s for s in only if s not in LEARNERS]
    if bad or not only: ap.error(f"--only takes a comma-separated subset of {','.join(LEARNERS)}, not {a.only!r}")
    batch = a.n_envs * a.traj_len
    if a.minibatch > batch or batch % a.minibatch:
        ap.error(f"--minibatch {a.minibatch} must divide n_envs x traj_len = {batch}")
    updates = a.steps // batch
    if a.warmup_updates is None: a.warmup_updates = max(3, updates // 10)
    if updates < a.warmup_updates + 2:
        ap.error(f"--steps {a.steps} gives {updates} updates of {batch} steps; need at least warm-up "
                 f"({a.warmup_updates}) + 2. Raise --steps or lower --warmup-updates.")
    a.steps = updates * batch

    env = dict(os.environ, PYTHONWARNINGS='ignore', TF_CPP_MIN_LOG_LEVEL='3')
    if a.jax_platform: env['JAX_PLATFORMS'] = a.jax_platform
    ncpu = os.cpu_count()
    print(f"PPO throughput on {ENV_ID}: reaver_nb vs Stable-Baselines3 vs sbx")
    print(f"python {platform.python_version()} ({platform.machine()}, {platform.system()}), os.cpu_count() = {ncpu}")
    print("versions: " + ', '.join(f"{d} {version(d)}" for d in (
        'reaver_nb', 'jax', 'jaxlib', 'flax', 'optax', 'torch', 'stable-baselines3', 'sbx-rl', 'gymnasium', 'numpy')))
    print(f"torch threads: torch.set_num_threads({a.torch_threads}) in the SB3 and sbx runs; "
          f"JAX_PLATFORMS={env.get('JAX_PLATFORMS', '(unset)')}")
    load = os.getloadavg()[0] if hasattr(os, 'getloadavg') else 0.
    print(f"load average (1 min) before the runs: {load:.2f} on {ncpu} cores")
    busy = load > 0.5
    if busy:
        print("WARNING: the machine is busy; every number below is slowed by the other load, and PyTorch's "
              "multi-threaded kernels most of all (with torch threads = cores, a busy core can slow SB3 tens of "
              "times). Measure on a quiet machine, or compare with --torch-threads 1.")
    print(f"settings: {a.n_envs} envs x {a.traj_len} steps = {batch} per update, {a.epochs} epochs of minibatch "
          f"{a.minibatch}, {a.steps:,} steps = {updates} updates; MLP {HP['hidden']} tanh, separate policy and "
          f"value nets; lr {HP['lr']} constant, gamma {HP['gamma']}, gae_lambda {HP['gae_lambda']}, "
          f"clip {HP['clip_range']}, no value clipping, ent_coef {HP['ent_coef']}, vf_coef {HP['vf_coef']} "
          f"(x MSE), max_grad_norm {HP['max_grad_norm']}, Adam eps {HP['adam_eps']}, seed {a.seed}")
    print(f"steady steps/s leaves out the first {a.warmup_updates} updates (compilation, warm-up), imports, "
          f"construction and reaver_nb's final checkpoint; whole-run steps/s counts them all. "
          f"{a.repeats} repeat(s), each run in its own process.\n", flush=True)

    results = {k: [] for k in only}
    skipped, failed = {}, {}
    for r in range(a.repeats):
        order = only[r % len(only):] + only[:r % len(only)]
        for k in order:
            if k in skipped or k in failed: continue
            res = run_one(k, a, env)
            if 'skip' in res:
                skipped[k] = res['skip']
                print(f"  {NAMES[k]}: not importable ({res['skip']}); skipping it. Install the peers with "
                      f"{INSTALL_HINT}", flush=True)
                continue
            if 'error' in res:
                failed[k] = res['error']
                print(f"  {NAMES[k]}: run failed; skipping it.\n{res['error']}", flush=True)
                continue
            results[k].append(res)
            extra = f", torch threads {res['torch_threads']}" if 'torch_threads' in res else ''
            extra += f", jax on {res['jax_device']}" if 'jax_device' in res else ''
            extra += f", {res['vec_env']} vector env" if 'vec_env' in res else ''
            ret = f"{res['ret']:.1f}" if res.get('ret') is not None else '-'
            print(f"  run {r + 1}/{a.repeats} {NAMES[k]:<12} steady {fmt_sps(res['sps']):>8} steps/s, whole run "
                  f"{fmt_sps(res['sps_total']):>8} steps/s ({res['total_s']:.1f} s, warm-up {res['warmup_s']:.1f} s)"
                  f", return {ret}{extra}", flush=True)

    med = {k: statistics.median(x['sps'] for x in v) for k, v in results.items() if v}
    med_total = {k: statistics.median(x['sps_total'] for x in v) for k, v in results.items() if v}
    print(f"\n{'learner':<13}{'steady steps/s':>15}  {'runs':<28}{'whole-run steps/s':>18}  {'return':>7}")
    for k in only:
        if k not in med:
            why = 'not installed: ' + INSTALL_HINT if k in skipped else 'failed'
            print(f"{NAMES[k]:<13}{'-':>15}  {why}")
            continue
        runs = ', '.join(fmt_sps(x['sps']) for x in results[k])
        rets = [x['ret'] for x in results[k] if x.get('ret') is not None]
        ret = f"{statistics.median(rets):7.1f}" if rets else f"{'-':>7}"
        print(f"{NAMES[k]:<13}{fmt_sps(med[k]):>15}  {runs:<28}{fmt_sps(med_total[k]):>18}  {ret}")
    print("(return: mean of the last 100 episodes at the end of the run, a check that each learner learns)")

    verdict = {}
    if 'reaver' in med:
        print()
        for k, goal in GOALS.items():
            if k not in med: print(f"reaver_nb / {NAMES[k]}: not measured"); continue
            ratio, ratio_total = med['reaver'] / med[k], med_total['reaver'] / med_total[k]
            met = ratio >= goal
            verdict[k] = dict(ratio=ratio, ratio_total=ratio_total, goal=goal, met=met)
            print(f"reaver_nb / {NAMES[k]}: {ratio:.2f}x steady ({ratio_total:.2f}x whole run); goal >= {goal:g}x: "
                  f"{'MET' if met else 'NOT MET'}" + (' (busy machine: not conclusive)' if busy else ''))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(dict(settings=vars(a) | dict(hp=HP, cpu_count=ncpu, load_average=load), results=results, median=med,
                           median_total=med_total, verdict=verdict, skipped=skipped, failed=failed), f, indent=1)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
