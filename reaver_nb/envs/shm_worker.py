"""Worker process of `ShmVectorEnv`: steps a slice of envs and writes results straight into shared memory.

Hand-written module (not exported from a notebook): dense process mechanics, tested by pytest (tests/test_shm.py),
shown in nbs/12_shm_vector_env.ipynb. Started as `python -m reaver_nb.envs.shm_worker` in a fresh interpreter; its
settings (cloudpickled env factories, the shared-memory layout, its rows, three pipe fds) arrive on stdin.

Protocol, one byte each way per command, nothing pickled per step:
parent -> worker  b's' step, b'r' reset, b'c' close;   worker -> parent  b'k' ready, b'd' done,
b'e' + b'r' or b'f' + 4-byte big-endian length + UTF-8 text on an exception (then the worker exits): the text's first
line is `raised <Type>: <message>`, then the traceback; b'r' when the env says a restart could cure it
(`Env.retryable`: a lost connection), b'f' when it could not (a bug, a missing game, a bad setting).
EOF on the command pipe means the parent is gone: the worker exits. A third pipe carries faulthandler's output (the
Python traceback of a segfault or abort) to the parent, which reads it when the worker dies; no file is written.
"""
import faulthandler, os, signal, struct, sys, traceback


def send_error(fd, text: str, retry: bool = False):
    head, _, rest = text.partition('\n')
    data = (head[:2000] + '\n' + rest[-58000:]).encode('utf-8', 'replace')   # the cause first, the traceback's end
    try: os.write(fd, b'e' + (b'r' if retry else b'f') + struct.pack('>I', len(data)) + data)
    except OSError: pass


def report(error: BaseException, env) -> tuple[str, bool]:
    "What the parent is told of an exception an env raised: `raised <Type>: <message>` and the traceback; retryable?"
    cause = ' '.join(traceback.format_exception_only(type(error), error)[-1].split()) or type(error).__name__
    check = getattr(env, 'retryable', None)
    try: retry = bool(check(error)) if check else isinstance(error, (ConnectionError, TimeoutError))
    except Exception: retry = False
    return f"raised {cause}\n{traceback.format_exc()}", retry


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C is the parent's to handle; it closes us cleanly
    import cloudpickle
    init = cloudpickle.loads(sys.stdin.buffer.read())
    cmd_fd, done_fd, fault_fd = init['cmd_fd'], init['done_fd'], init['fault_fd']
    for fd in (cmd_fd, done_fd, fault_fd): os.set_inheritable(fd, False)    # not into processes the envs start
    os.set_blocking(fault_fd, False)                    # a full pipe truncates a crash report rather than hanging it
    faulthandler.enable(fault_fd)                       # a segfault leaves its Python traceback for the parent
    from reaver_nb.envs.shm import attach_shared_memory, layout_views
    shm = attach_shared_memory(init['shm_name'])
    v = layout_views(shm.buf, init['layout'])
    lo, hi = init['rows']
    obs, final, acts = v['obs'], v['final'], v['act']
    reward, terminated, truncated, seeds = v['reward'], v['terminated'], v['truncated'], v['seed']
    envs, env = [], None      # env: the one being stepped or reset (whose `retryable` judges its exception)
    try:
        envs = [fn() for fn in cloudpickle.loads(init['env_fns'])]
        os.write(done_fd, b'k')
        while True:
            c = os.read(cmd_fd, 1)
            if not c or c == b'c': break
            if c == b's':
                rs, tes, trs = [], [], []
                for i, env in enumerate(envs, lo):
                    o, r, te, tr = env.step(tuple(a[i] for a in acts))
                    if te or tr:
                        for buf, x in zip(final, o): buf[i] = x
                        o = env.reset()
                    for buf, x in zip(obs, o): buf[i] = x
                    rs.append(r); tes.append(te); trs.append(tr)
                reward[lo:hi], terminated[lo:hi], truncated[lo:hi] = rs, tes, trs
            elif c == b'r':
                for i, env in enumerate(envs, lo):
                    s = int(seeds[i])
                    for buf, x in zip(obs, env.reset(None if s < 0 else s)): buf[i] = x
            os.write(done_fd, b'd')
    except BrokenPipeError: pass
    except BaseException as e:
        send_error(done_fd, *report(e, env))
    finally:
        for env in envs:
            try: env.close()
            except Exception: pass
        del obs, final, acts, reward, terminated, truncated, seeds, v
        shm.close()


if __name__ == '__main__':
    main()
