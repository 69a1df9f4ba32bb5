"""`ShmVectorEnv`: env workers write observations straight into shared memory; nothing is pickled per step.

Hand-written module (not exported from a notebook): dense process mechanics, tested by pytest (tests/test_shm.py),
shown in nbs/12_shm_vector_env.ipynb.

Design (measured in bench/handshake.py and bench/vector_env.py):
- One shared-memory block holds every batch buffer (observations, final observations, actions, rewards,
  terminated, truncated, reset seeds), laid out from the Specs; worker `w` owns rows `[lo, hi)` of each.
- Workers are fresh interpreters (`python -m reaver_nb.envs.shm_worker`, i.e. spawn semantics: no fork after JAX
  has started threads, and the user's `__main__` is never re-imported). Env factories travel once, cloudpickled.
- Per step: the parent writes actions, sends one byte down each worker's command pipe, and polls the workers' done
  pipes. A worker that dies closes its pipe, so `poll` wakes at once: death is detected immediately, a hung worker
  after `step_timeout`. Blocking pipes burn no CPU while idle.
- A worker whose process died, hung, or whose env raised an error a restart can cure (`Env.retryable`: a lost
  connection) is restarted (up to `max_restarts` over the env's lifetime, as mlagents-learn's
  `--max-lifetime-restarts`); its envs' episodes end as truncated and are flagged `crashed`. Past the limit, or at once
  for any other exception (a bug, a bad setting, a missing game: a restart would fail the same way), an
  `EnvWorkerError` names the env and the exception (`<Type>: <message>` on its first line) and carries the worker's
  traceback.
- A worker's faulthandler output (the Python traceback of a segfault or abort) goes down a third pipe, read when the
  worker dies: no file is ever created for it, so a killed worker or a killed parent leaves nothing in the temp folder.
- Cleanup: `close()`, garbage collection and interpreter exit stop the workers and unlink the block; if the parent
  is killed, the workers see EOF on their command pipe and exit, and multiprocessing's resource tracker unlinks the
  block.
"""
from __future__ import annotations
import os, select, signal, struct, subprocess, sys, time, warnings, weakref
from multiprocessing import shared_memory
from typing import Callable, Sequence
import numpy as np
from reaver_nb.spec import Spec
from reaver_nb.envs.base import Env, VectorEnv, VecStep

__all__ = ['ShmVectorEnv', 'EnvWorkerError', 'layout_views', 'attach_shared_memory']

_ALIGN = 64


class EnvWorkerError(RuntimeError):
    "An env worker failed more often than allowed, or could not start."


def _layout(obs_spec: Spec, act_spec: Spec, n: int):
    "[(group, index, shape, dtype, offset)], total size: every buffer of the batch in one block."
    items = []
    for k, s in enumerate(obs_spec): items.append(('obs', k, (n,) + s.shape, s.dtype))
    for k, s in enumerate(obs_spec): items.append(('final', k, (n,) + s.shape, s.dtype))
    for k, s in enumerate(act_spec): items.append(('act', k, (n,) + s.shape, s.dtype))
    items += [('reward', 0, (n,), 'float32'), ('terminated', 0, (n,), 'bool'), ('truncated', 0, (n,), 'bool'),
              ('seed', 0, (n,), 'int64')]
    out, off = [], 0
    for g, k, shape, dt in items:
        out.append((g, k, shape, dt, off))
        off += -(-int(np.prod(shape, dtype=np.int64)) * np.dtype(dt).itemsize // _ALIGN) * _ALIGN
    return out, max(off, _ALIGN)


def layout_views(buf, layout) -> dict:
    "Numpy views into the block: tuples for obs/final/act, arrays for the rest."
    v = {'obs': [], 'final': [], 'act': []}
    for g, k, shape, dt, off in layout:
        a = np.ndarray(shape, dt, buffer=buf, offset=off)
        if g in v: v[g].append(a)
        else: v[g] = a
    return {g: (tuple(x) if isinstance(x, list) else x) for g, x in v.items()}


def attach_shared_memory(name: str) -> shared_memory.SharedMemory:
    "Attach to an existing block without registering it with the resource tracker (the parent owns it)."
    if sys.version_info >= (3, 13): return shared_memory.SharedMemory(name, track=False)
    from multiprocessing import resource_tracker
    register = resource_tracker.register
    resource_tracker.register = lambda *a, **k: None
    try: return shared_memory.SharedMemory(name)
    finally: resource_tracker.register = register


class _Failure(str):
    "Why a worker failed (first line: the cause), and whether restarting it may help (`retry`)."
    def __new__(cls, text: str, retry: bool = True):
        self = str.__new__(cls, text)
        self.retry = retry
        return self


class _Worker:
    def __init__(self, idx, lo, hi):
        self.idx, self.lo, self.hi = idx, lo, hi
        self.proc = self.cmd_w = self.done_r = self.fault_r = None


class _Resources:
    "Everything that must be released, held apart from the env so a finalizer can release it."
    def __init__(self):
        self.workers, self.shm, self.views = [], None, None

    def stop_worker(self, w: _Worker, graceful: bool = True):
        if w.proc is None: return
        if graceful and w.proc.poll() is None:
            try: os.write(w.cmd_w, b'c')
            except OSError: pass
            try: w.proc.wait(timeout=5)
            except subprocess.TimeoutExpired: pass
        if w.proc.poll() is None:
            w.proc.kill()
        w.proc.wait()
        for fd in (w.cmd_w, w.done_r, w.fault_r):
            if fd is None: continue
            try: os.close(fd)
            except OSError: pass
        w.proc = w.cmd_w = w.done_r = w.fault_r = None

    def release(self):
        for w in self.workers: self.stop_worker(w)
        self.views = None
        if self.shm is not None:
            try: self.shm.close()
            except BufferError: pass        # a view is still referenced somewhere; unlinking frees the name anyway
            try: self.shm.unlink()
            except FileNotFoundError: pass
            self.shm = None


class ShmVectorEnv(VectorEnv):
    "`n` envs stepped in worker processes that write into shared memory; the same interface as `InProcessVectorEnv`."
    def __init__(self, env_fns: Sequence[Callable[[], Env]], n_workers: int | None = None, spec=None,
                 max_restarts: int = 10, step_timeout: float = 120., start_timeout: float = 600., name: str = ''):
        import cloudpickle
        if not env_fns: raise ValueError("ShmVectorEnv needs at least one env factory.")
        self.n_envs = n = len(env_fns)
        self.n_workers = max(1, min(n, n_workers or os.cpu_count() or 1))
        self.max_restarts, self.restarts = max_restarts, 0
        self.step_timeout, self.start_timeout = step_timeout, start_timeout
        if spec is None:
            probe = env_fns[0]()
            spec = (probe.obs_spec, probe.act_spec)
            probe.close()
        self.obs_spec, self.act_spec = spec
        self.name = name or self.obs_spec.name or 'env'
        bounds = np.linspace(0, n, self.n_workers + 1).astype(int)
        self._blobs = []
        for w in range(self.n_workers):
            try: self._blobs.append(cloudpickle.dumps(list(env_fns[bounds[w]:bounds[w + 1]])))
            except Exception as e:
                raise TypeError(f"The env factories of {self.name} cannot be pickled for the worker processes "
                                f"({type(e).__name__}: {e}). Use module-level functions or functools.partial, or "
                                "the in-process vector env (RunSettings.vector_env = 'inprocess').") from e
        self._layout, size = _layout(self.obs_spec, self.act_spec, n)
        self._res = res = _Resources()
        self._finalizer = weakref.finalize(self, res.release)
        res.shm = shared_memory.SharedMemory(create=True, size=size)
        res.views = v = layout_views(res.shm.buf, self._layout)
        self._obs, self._final, self._act = v['obs'], v['final'], v['act']
        self._reward, self._term, self._trunc, self._seed = v['reward'], v['terminated'], v['truncated'], v['seed']
        self._poll = select.poll()
        self._ep_ret, self._ep_len = np.zeros(n), np.zeros(n, np.int64)
        self._last_obs, self._pending, self._base_seed = None, False, None
        res.workers = [_Worker(w, int(bounds[w]), int(bounds[w + 1])) for w in range(self.n_workers)]
        try:
            for w in res.workers: self._spawn(w)
            failed = self._wait(res.workers, self.start_timeout)
            for w, why in failed.items():       # an env that cannot be built is a bug, not bad luck: no retries
                if why.startswith('raised'): raise EnvWorkerError(self._describe(w, why, 'could not start'))
            if failed: self._restart(failed)
        except BaseException:
            self.close(); raise

    # --- processes -------------------------------------------------------------------------------------------------
    def _spawn(self, w: _Worker):
        import cloudpickle
        cmd_r, cmd_w = os.pipe()
        done_r, done_w = os.pipe()
        fault_r, fault_w = os.pipe()          # the worker's faulthandler output; read only when it dies
        os.set_blocking(fault_r, False)
        w.cmd_w, w.done_r, w.fault_r = cmd_w, done_r, fault_r
        path = [os.getcwd() if p == '' else p for p in sys.path]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
        init = dict(env_fns=self._blobs[w.idx], cmd_fd=cmd_r, done_fd=done_w, fault_fd=fault_w,
                    shm_name=self._res.shm.name, layout=self._layout, rows=(w.lo, w.hi))
        try:
            w.proc = subprocess.Popen([sys.executable, '-m', 'reaver_nb.envs.shm_worker'], stdin=subprocess.PIPE,
                                      pass_fds=(cmd_r, done_w, fault_w), env=env)
        except BaseException:
            for fd in (cmd_w, done_r, fault_r): os.close(fd)
            w.cmd_w = w.done_r = w.fault_r = None
            raise
        finally:
            for fd in (cmd_r, done_w, fault_w): os.close(fd)
        try:
            w.proc.stdin.write(cloudpickle.dumps(init)); w.proc.stdin.close()
        except BrokenPipeError: pass
        self._poll.register(done_r, select.POLLIN | select.POLLHUP | select.POLLERR)

    def _read_error(self, fd) -> _Failure:
        "A worker's report of an exception (shm_worker.send_error): its cause and traceback, and whether to retry."
        head = os.read(fd, 5)
        if len(head) < 5: return _Failure('raised an exception (its report was cut short)')
        size, data = struct.unpack('>I', head[1:])[0], b''
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk: break
            data += chunk
        return _Failure(data.decode('utf-8', 'replace'), retry=head[:1] == b'r')

    def _death(self, w: _Worker) -> str:
        try: rc = w.proc.wait(timeout=5)
        except subprocess.TimeoutExpired: rc = None
        if rc is None: why = 'closed its pipe but is still running'
        elif rc < 0:
            try: why = f'died with signal {-rc} ({signal.Signals(-rc).name})'
            except ValueError: why = f'died with signal {-rc}'
        else: why = f'exited with status {rc}'
        fault = self._read_fault(w).decode('utf-8', 'replace').strip()
        return why + (f'\n{fault}' if fault else '')

    @staticmethod
    def _read_fault(w: _Worker, limit: int = 1 << 20) -> bytes:
        "What the dead worker's faulthandler wrote (non-blocking: a grandchild holding the pipe cannot hang us)."
        out = b''
        while w.fault_r is not None and len(out) < limit:
            try: chunk = os.read(w.fault_r, 65536)
            except OSError: break            # EAGAIN: nothing (more) written
            if not chunk: break
            out += chunk
        return out

    def _wait(self, workers, timeout: float) -> dict:
        "Wait for one answer from each worker; returns {worker: reason} for those that failed."
        pending = {w.done_r: w for w in workers}
        failed = {}
        deadline = time.monotonic() + timeout
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                for w in pending.values(): failed[w] = _Failure(f'gave no answer within {timeout:g} s (hung?)')
                break
            for fd, ev in self._poll.poll(left * 1000):
                w = pending.pop(fd, None)
                if w is None: continue
                b = os.read(fd, 1) if ev & select.POLLIN else b''
                if b in (b'd', b'k'): continue
                failed[w] = self._read_error(fd) if b == b'e' else _Failure(self._death(w))
        return failed

    def _describe(self, w, why, what='failed'):
        return (f"Env worker {w.idx} of {self.name} (envs {w.lo}..{w.hi - 1}) {what}: {why}")

    def _restart(self, failed: dict):
        "Restart failed workers (bounded over the lifetime) and start fresh episodes on their envs."
        queue = list(failed.items())
        while queue:
            w, why = queue.pop(0)
            self._poll.unregister(w.done_r)
            self._res.stop_worker(w, graceful=False)
            if not why.retry:   # a bug, a bad setting, a missing game: a restart would fail the same way
                self.close()
                raise EnvWorkerError(self._describe(w, why) + "\nNot restarted: a restart would fail the same way "
                                     "(only a lost connection, a timeout or a dead worker process is retried).")
            self.restarts += 1
            if self.restarts > self.max_restarts:
                self.close()
                raise EnvWorkerError(self._describe(w, why) + f"\nThat is failure {self.restarts}; max_restarts="
                                     f"{self.max_restarts} over the env's lifetime. Fix the env, or raise "
                                     "max_restarts if failures are expected (e.g. a flaky game client).")
            warnings.warn(self._describe(w, why.splitlines()[0]) + f"; restarting it ({self.restarts}/"
                          f"{self.max_restarts}), its episodes end here.", RuntimeWarning, stacklevel=3)
            self._spawn(w)
            self._seed[w.lo:w.hi] = -1 if self._base_seed is None else \
                self._base_seed + 100_003 * self.restarts + np.arange(w.lo, w.hi)
            again = self._wait([w], self.start_timeout)
            if not again:
                try: os.write(w.cmd_w, b'r')
                except OSError: pass
                again = self._wait([w], self.start_timeout)
            if again: queue.append((w, again[w]))

    def _send(self, cmd: bytes):
        for w in self._res.workers:
            try: os.write(w.cmd_w, cmd)
            except OSError: pass          # a dead worker: `_wait` sees its closed pipe and reports why it died

    # --- the VectorEnv interface -----------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> tuple:
        if self._pending: self.step_wait()
        self._base_seed = seed
        self._seed[:] = -1 if seed is None else seed + np.arange(self.n_envs)
        self._send(b'r')
        failed = self._wait(self._res.workers, self.start_timeout)
        if failed: self._restart(failed)
        self._ep_ret[:], self._ep_len[:] = 0, 0
        self._last_obs = tuple(x.copy() for x in self._obs)
        return self._last_obs

    def step_async(self, actions: tuple):
        "Send actions; the workers step while the caller does other work. Collect with `step_wait`."
        if self._pending: raise RuntimeError("step_async called twice without step_wait.")
        for buf, a in zip(self._act, actions): buf[:] = a
        self._send(b's')
        self._pending = True

    def step_wait(self) -> VecStep:
        failed = self._wait(self._res.workers, self.step_timeout)
        self._pending = False
        crashed = np.zeros(self.n_envs, bool)
        if failed:
            self._restart(failed)
            for w in failed:
                rows = slice(w.lo, w.hi)
                crashed[rows] = True
                self._reward[rows], self._term[rows], self._trunc[rows] = 0., False, True
                for buf, last in zip(self._final, self._last_obs): buf[rows] = last[rows]
        obs = tuple(x.copy() for x in self._obs)
        reward, term, trunc = self._reward.copy(), self._term.copy(), self._trunc.copy()
        done = term | trunc
        final_obs = obs
        if done.any():
            final_obs = tuple(o.copy() for o in obs)
            for buf, f in zip(final_obs, self._final): buf[done] = f[done]
        self._ep_ret += reward; self._ep_len += 1
        ep_ret = np.where(done, self._ep_ret, 0.).astype(np.float32)
        ep_len = np.where(done, self._ep_len, 0).astype(np.int32)
        self._ep_ret[done], self._ep_len[done] = 0., 0
        self._last_obs = obs
        return VecStep(obs, reward, term, trunc, final_obs, ep_ret, ep_len, crashed)

    def step(self, actions: tuple) -> VecStep:
        self.step_async(actions)
        return self.step_wait()

    @property
    def pids(self) -> list[int]:
        return [w.proc.pid for w in self._res.workers if w.proc is not None]

    @property
    def shm_name(self) -> str | None:
        return self._res.shm.name if self._res.shm is not None else None

    def close(self):
        self._obs = self._final = self._act = None
        self._reward = self._term = self._trunc = self._seed = None
        self._finalizer()
