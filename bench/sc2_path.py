#!/usr/bin/env python
"""The real-game path's own cost, measured on the StarCraft II stand-in (`tools/sc2_standin`), next to the fused path,
in one run on one machine.

1. **Frames per second of training** (`reaver train`, A2C, MoveToBeacon 16 x 16, the embedded default's settings):
   `--env MoveToBeacon` (pysc2, one stand-in game per env, the default shared-memory workers) and `--env
   jax:MoveToBeacon` (the fused path), at 1, 4 and 8 envs. Each row is the median over `--repeats` runs of the
   steady frames per second (the log's rows after the first `--warmup` seconds, compilation and game start-up left
   out); the ratio is real path / fused path.
2. **Where one env step's time goes** on the real path (blocks of `--split-steps` random calls, alternating between
   one env in this process and one in a shared-memory worker, medians over the blocks): the game's own time (the
   stand-in's simulation and its encoding of the observation, which it logs per request: on the real game this is
   the game's), pysc2's protobuf serialising and parsing, the websocket round trips (both ends' websocket code and
   the scheduling between the processes, less the game's own time), pysc2's feature decoding and action encoding
   (`transform_obs`, `transform_action`, pysc2's stopwatch), our adapter (`SC2Env.from_pysc2` and
   `function_call`), and the shared-memory transport (the worker's step, less this process's).

    python bench/sc2_path.py                         # about 15 minutes on 2 cores
    python bench/sc2_path.py --envs 1 4 --repeats 1 --frames 4096
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import sc2_standin   # noqa: E402

CONFIG = ROOT / 'reaver_nb' / 'configs' / 'jax' / 'MoveToBeacon.gin'   # the same settings on both paths


def train_fps(env_id: str, n_envs: int, frames: int, warmup: float, results: Path, seed: int) -> float:
    "Median frames/s of a `reaver train` run's log rows after `warmup` seconds (start-up and compilation left out)."
    run = f"{env_id.replace(':', '_')}_{n_envs}_{seed}_{time.monotonic_ns()}"
    cmd = [sys.executable, '-m', 'reaver_nb', 'train', '--env', env_id, '--agent', 'a2c', '--n-envs', str(n_envs),
           '--steps', str(frames), '--seed', str(seed), '--run-id', run, '--results-dir', str(results), '--quiet',
           '--gin-param', 'RunSettings.log_every = 4', '--gin-param', 'RunSettings.log_seconds = 5.0']
    if not env_id.startswith('jax:'): cmd += ['--gin-file', str(CONFIG)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    rows = [json.loads(l) for l in (results / run / 'metrics.jsonl').read_text().splitlines()]
    rows = [r for r in rows if r.get('time', 0) >= warmup]
    if len(rows) < 2: raise SystemExit(f"{env_id} x {n_envs}: fewer than two log rows after {warmup} s; raise --frames")
    return (rows[-1]['frames'] - rows[0]['frames']) / (rows[-1]['time'] - rows[0]['time'])


def split(steps: int, log: Path, blocks: int) -> dict:
    """Seconds per env step, by part, on the real path: one env in this process and one in a shared-memory worker
    process, measured in alternating blocks of `steps` random steps (so that a change in the machine's load hits
    both), medians over `blocks`."""
    import numpy as np
    from reaver_nb.sc2.compat import import_pysc2
    import_pysc2()
    from pysc2.lib import stopwatch
    from reaver_nb.envs.sc2 import SC2Env
    from reaver_nb.envs.base import InProcessVectorEnv
    from reaver_nb.envs.shm import ShmVectorEnv

    adapter, timing = {'from_pysc2': 0., 'function_call': 0.}, {'on': False}
    for name in adapter:
        method = getattr(SC2Env, name)
        def timed(self, *a, _m=method, _n=name):
            if not timing['on']: return _m(self, *a)
            t = time.perf_counter(); out = _m(self, *a); adapter[_n] += time.perf_counter() - t; return out
        setattr(SC2Env, name, timed)

    env = SC2Env('MoveToBeacon')
    mask = env.obs_spec.names.index('available_actions')
    rng = np.random.default_rng(0)
    def act(obs):
        a = [np.asarray(x) for x in env.act_spec.sample(rng, (len(obs[mask]),))]
        a[0] = np.array([rng.choice(np.flatnonzero(m)) for m in obs[mask]], a[0].dtype)
        return tuple(a)
    local = InProcessVectorEnv([lambda: env])
    worker = ShmVectorEnv([lambda: SC2Env('MoveToBeacon')], n_workers=1, spec=(env.obs_spec, env.act_spec))
    obs = {id(v): v.reset(seed=1) for v in (local, worker)}
    def run(venv, n):
        o = obs[id(venv)]
        t = time.perf_counter()
        for _ in range(n): o = venv.step(act(o)).obs
        obs[id(venv)] = o
        return (time.perf_counter() - t) / max(n, 1)
    runs = []
    try:
        run(local, 20); run(worker, 20)    # compiled, started
        for _ in range(blocks):
            in_worker, in_process = run(worker, steps), run(local, steps)   # as they run (no timers in the way)
            for k in adapter: adapter[k] = 0.
            log.write_text('')
            timing['on'] = True
            stopwatch.sw.times.clear(); stopwatch.sw.enable()
            timed_step = run(local, steps)                                  # with pysc2's stopwatch and our timers
            stopwatch.sw.disable()
            timing['on'] = False
            sw = {k: v.sum / steps for k, v in stopwatch.sw.times.items()}
            game = sum(float(l.split()[1]) for l in log.read_text().splitlines()
                       if l.split()[0] in ('action', 'step', 'observation')) / steps
            controller = sum(sw.get(f'step_env.{k}', 0.) for k in ('actions', 'step', 'observe'))
            codec = sum(v for k, v in sw.items() if k.endswith(('serialize_request', 'parse_response')))
            decode, encode = sw.get('step_env.transform_obs', 0.), sw.get('step_env.transform_action', 0.)
            ours = sum(adapter.values()) / steps
            runs.append({"the game's own time (the stand-in: simulation and its encoding)": game,
                         "pysc2's protobuf serialising and parsing": codec,
                         'the websocket round trips (both ends, less the game)': controller - codec - game,
                         "pysc2's feature decoding (transform_obs)": decode,
                         "pysc2's action encoding (transform_action)": encode,
                         'our adapter (from_pysc2, function_call)': ours,
                         'the rest in this process (pysc2 SC2Env bookkeeping, the vector env, the random policy)':
                             timed_step - controller - decode - encode - ours,
                         "the timers' own cost (not paid in a run)": timed_step - in_process,
                         'shared-memory transport (a worker process, less this process)': in_worker - in_process,
                         'in_process': in_process, 'in_worker': in_worker})
    finally:
        local.close(); worker.close()
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return dict(in_process=med.pop('in_process'), in_worker=med.pop('in_worker'), parts=med, runs=runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--envs', type=int, nargs='+', default=[1, 4, 8])
    ap.add_argument('--frames', type=int, default=None, help='frames per training run (default: 6,144 x envs)')
    ap.add_argument('--warmup', type=float, default=20., help='seconds of each run left out (start-up, compilation)')
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--split-steps', type=int, default=300, help='random steps per block of the split')
    ap.add_argument('--only-split', action='store_true', help='skip the training rows')
    ap.add_argument('--json', default=None)
    a = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix='sc2_path_'))
    os.environ['SC2PATH'] = str(sc2_standin.lay_out(scratch / 'StarCraftII'))
    log = scratch / 'standin.log'
    os.environ['SC2_STANDIN_LOG'] = str(log)
    import jax
    print(f"MoveToBeacon 16 x 16, A2C with the embedded default's settings; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, jax {jax.__version__} ({jax.default_backend()}); "
          "the real path on the StarCraft II stand-in", flush=True)
    rows = {}
    for n in ([] if a.only_split else a.envs):
        frames = a.frames or 6144 * n
        runs = {p: [] for p in ('real', 'fused')}
        for r in range(a.repeats):   # alternate the paths, so that a change in the machine's load hits both
            for path, env_id in (('real', 'MoveToBeacon'), ('fused', 'jax:MoveToBeacon')):
                runs[path].append(train_fps(env_id, n, frames, a.warmup, scratch / 'results', r))
        rows[n] = {p: statistics.median(v) for p, v in runs.items()} | {'runs': runs}
        print(f"{n} envs: real path {rows[n]['real']:7.0f} frames/s, fused {rows[n]['fused']:7.0f} frames/s, "
              f"real / fused {rows[n]['real'] / rows[n]['fused']:.2f}x  (runs: real {[round(x) for x in runs['real']]}, "
              f"fused {[round(x) for x in runs['fused']]})", flush=True)
    blocks = max(3, 2 * a.repeats + 1)
    s = split(a.split_steps, log, blocks)
    print(f"\nOne env step on the real path (medians of {blocks} alternating blocks of {a.split_steps} random steps): "
          f"{1e3 * s['in_process']:.2f} ms in this process, {1e3 * s['in_worker']:.2f} ms through a shared-memory worker")
    for k, v in s['parts'].items(): print(f"  {1e3 * v:7.3f} ms  {100 * v / s['in_worker']:5.1f}%  {k}")
    print("  (percentages of the worker's step; the parts are measured with timers on, which cost the line above)")
    if a.json: Path(a.json).write_text(json.dumps(dict(rows=rows, split=s, date=time.strftime('%F %T')), indent=1))


if __name__ == '__main__':
    main()
