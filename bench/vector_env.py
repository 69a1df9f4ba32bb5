"""Vector-env throughput: reaver_nb's vector envs against gymnasium's, ale-py's and envpool, one run, same machine.

Random actions; env steps per second (all envs) for each n_envs; the median of `--repeats` timed windows of
`--seconds` each, after a warm-up. The same env construction for reaver_nb and gymnasium (gymnasium's own Atari
wrappers for Pong: AtariPreprocessing + 4-frame stack); envpool does its preprocessing in C++, and so does ale-py's
`AtariVectorEnv` ('ale AtariVectorEnv': the raw C++ vector env, configured as reaver_nb's adapter configures it, so
with GymEnv's preprocessing; 'reaver ale': that adapter, `RunSettings.vector_env = 'ale'`). The ale peers run Atari
only. The last rows give each peer's steps/s over envpool's.

    python bench/vector_env.py                      # CartPole-v1 and Pong, n_envs 2 4 8 16
    python bench/vector_env.py --envs Pong --n-envs 8 --repeats 5
"""
import argparse, os, platform, statistics, sys, time, warnings
from functools import partial
import numpy as np

warnings.filterwarnings('ignore')
ENVS = {'CartPole-v1': dict(gym='CartPole-v1', envpool='CartPole-v1', n_actions=2),
        'Pong': dict(gym='ALE/Pong-v5', envpool='Pong-v5', n_actions=6)}


def _gym_env(env_id):
    from reaver_nb.envs.gym import GymEnv
    return GymEnv(env_id).env          # the gymnasium env with exactly the wrappers reaver_nb uses


def make(peer, env, n):
    "Returns (step(actions), close()) for one peer."
    spec = ENVS[env]
    if peer in ('reaver ale', 'ale AtariVectorEnv'):
        from reaver_nb.envs.gym import AleVectorEnv
        v = AleVectorEnv(spec['gym'], n)          # the adapter, with GymEnv's preprocessing...
        v.reset(seed=0)
        if peer == 'reaver ale': return (lambda a: v.step((a,))), v.close
        return v.env.step, v.close                # ...or the C++ vector env inside it, stepped directly
    if peer.startswith('reaver'):
        from reaver_nb.envs.gym import GymEnv
        from reaver_nb.envs.base import InProcessVectorEnv
        from reaver_nb.envs.shm import ShmVectorEnv
        fns = [partial(GymEnv, spec['gym'])] * n
        v = ShmVectorEnv(fns) if peer == 'reaver shm' else InProcessVectorEnv(fns)
        v.reset(seed=0)
        return (lambda a: v.step((a,))), v.close
    if peer.startswith('gym'):
        import gymnasium as gym
        fns = [partial(_gym_env, spec['gym'])] * n
        if peer == 'gym Sync': v = gym.vector.SyncVectorEnv(fns)
        else: v = gym.vector.AsyncVectorEnv(fns, shared_memory=peer.endswith('shm=True'), context='spawn')
        v.reset(seed=0)
        return v.step, v.close
    if peer == 'envpool':
        import envpool
        v = envpool.make_gym(spec['envpool'], num_envs=n, seed=0)
        v.reset()
        return v.step, v.close
    raise ValueError(peer)


def applies(peer, env):
    "The ale peers run Atari only."
    return not peer.startswith(('reaver ale', 'ale ')) or ENVS[env]['gym'].startswith('ALE/')


def measure(peer, env, n, seconds, repeats):
    step, close = make(peer, env, n)
    acts = np.random.default_rng(0).integers(0, ENVS[env]['n_actions'], (1024, n)).astype(np.int32)
    try:
        for i in range(50): step(acts[i % 1024])
        runs = []
        for _ in range(repeats):
            k, t0 = 0, time.perf_counter()
            while True:
                for _ in range(16): step(acts[k % 1024]); k += 1
                dt = time.perf_counter() - t0
                if dt >= seconds: break
            runs.append(k * n / dt)
    finally: close()
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--envs', nargs='+', default=list(ENVS), choices=list(ENVS))
    ap.add_argument('--n-envs', nargs='+', type=int, default=[2, 4, 8, 16])
    ap.add_argument('--peers', nargs='+', default=['reaver shm', 'reaver inprocess', 'reaver ale', 'gym Sync',
                                                  'gym Async shm=False', 'gym Async shm=True', 'ale AtariVectorEnv',
                                                  'envpool'])
    ap.add_argument('--seconds', type=float, default=2.0)
    ap.add_argument('--repeats', type=int, default=3)
    a = ap.parse_args()
    import gymnasium, reaver_nb
    try: import envpool; epv = envpool.__version__
    except ImportError: epv = None; a.peers = [p for p in a.peers if p != 'envpool']
    try: import ale_py; alev = ale_py.__version__
    except ImportError: alev = None
    print(f"python {platform.python_version()}, {os.cpu_count()} cores (load average {os.getloadavg()[0]:.2f}), "
          f"gymnasium {gymnasium.__version__}, ale-py {alev or 'not installed'}, "
          f"envpool {epv or 'not installed (pip install envpool)'}, reaver_nb {reaver_nb.__version__}; "
          f"median of {a.repeats} x {a.seconds:g} s, random actions")
    for env in a.envs:
        peers = [p for p in a.peers if applies(p, env)]
        print(f"\n{env}: env steps per second")
        print(f"{'n_envs':>6} " + ' '.join(f"{p:>20}" for p in peers) + f" {'shm/Async(shm)':>15} {'shm/envpool':>12}")
        ratios = []
        for n in a.n_envs:
            med = {}
            for p in peers:
                try: med[p] = statistics.median(measure(p, env, n, a.seconds, a.repeats))
                except Exception as e: med[p] = float('nan'); print(f"  {p} failed: {type(e).__name__}: {e}", file=sys.stderr)
            r1 = med.get('reaver shm', np.nan) / med.get('gym Async shm=True', np.nan)
            r2 = med.get('reaver shm', np.nan) / med.get('envpool', np.nan)
            print(f"{n:>6} " + ' '.join(f"{med[p]:>20,.0f}" for p in peers) + f" {r1:>14.2f}x {r2:>11.2f}x", flush=True)
            ratios.append((n, {p: med[p] / med.get('envpool', np.nan) for p in peers}))
        print(f"{env}: steps/s over envpool's")
        for n, r in ratios: print(f"{n:>6} " + ' '.join(f"{r[p]:>19.2f}x" for p in peers), flush=True)


if __name__ == '__main__':
    main()
