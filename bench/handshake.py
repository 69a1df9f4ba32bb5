"""Per-step handshake candidates for ShmVectorEnv, measured in one run on this machine.

A parent and one worker process (a fresh interpreter, as ShmVectorEnv starts them) ping-pong `--rounds` times; each
round is what one vector-env step costs in synchronisation alone. Printed: round-trip latency (median of `--repeats`)
and the worker's CPU use while idle (1 s of waiting), which tells a spinning design from a blocking one.

    python bench/handshake.py --rounds 20000 --repeats 5
"""
import argparse, multiprocessing as mp, os, statistics, sys, time
from multiprocessing import shared_memory

PIPE_WORKER = """
import os, sys
r, w, rounds = map(int, sys.argv[1:])
for _ in range(rounds + 1):
    os.read(r, 1); os.write(w, b'd')
"""

def _conn_worker(rc, wc, rounds):
    for _ in range(rounds + 1):
        rc.recv_bytes(); wc.send_bytes(b'd')

def _sem_worker(go, done, rounds):
    for _ in range(rounds + 1):
        go.acquire(); done.release()

def _event_worker(go, done, rounds):
    for _ in range(rounds + 1):
        go.wait(); go.clear(); done.set()

def _spin_worker(name, rounds):
    shm = shared_memory.SharedMemory(name)
    flag = shm.buf
    for i in range(1, rounds + 2):
        n = 0
        while flag[0] != i % 256:
            n += 1
            if n > 1000: time.sleep(0)          # back off: yield the core
        flag[1] = i % 256
    del flag; shm.close()

def measure(kind, rounds):
    ctx = mp.get_context('spawn')
    if kind == 'os.pipe byte':       # ShmVectorEnv's handshake: a fresh interpreter holding the pipe ends it was given
        import subprocess
        r1, w1 = os.pipe(); r2, w2 = os.pipe()
        p = subprocess.Popen([sys.executable, '-c', PIPE_WORKER, str(r1), str(w2), str(rounds)], pass_fds=(r1, w2))
        os.close(r1); os.close(w2)
        p.join = p.wait
        os.write(w1, b'x'); os.read(r2, 1)                       # warm-up round
        t = time.perf_counter()
        for _ in range(rounds): os.write(w1, b'x'); os.read(r2, 1)
        dt = time.perf_counter() - t
    elif kind == 'Connection bytes':
        a, b = ctx.Pipe(duplex=False); c, d = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_conn_worker, args=(a, d, rounds)); p.start()
        b.send_bytes(b'x'); c.recv_bytes()
        t = time.perf_counter()
        for _ in range(rounds): b.send_bytes(b'x'); c.recv_bytes()
        dt = time.perf_counter() - t
    elif kind == 'Semaphore':
        go, done = ctx.Semaphore(0), ctx.Semaphore(0)
        p = ctx.Process(target=_sem_worker, args=(go, done, rounds)); p.start()
        go.release(); done.acquire()
        t = time.perf_counter()
        for _ in range(rounds): go.release(); done.acquire()
        dt = time.perf_counter() - t
    elif kind == 'Event':
        go, done = ctx.Event(), ctx.Event()
        p = ctx.Process(target=_event_worker, args=(go, done, rounds)); p.start()
        go.set(); done.wait(); done.clear()
        t = time.perf_counter()
        for _ in range(rounds): go.set(); done.wait(); done.clear()
        dt = time.perf_counter() - t
    elif kind == 'spin + backoff':
        shm = shared_memory.SharedMemory(create=True, size=2)
        shm.buf[0] = shm.buf[1] = 0
        p = ctx.Process(target=_spin_worker, args=(shm.name, rounds)); p.start()
        def rnd(i):
            shm.buf[0] = i % 256
            n = 0
            while shm.buf[1] != i % 256:
                n += 1
                if n > 1000: time.sleep(0)
        rnd(1)
        t = time.perf_counter()
        for i in range(2, rounds + 2): rnd(i)
        dt = time.perf_counter() - t
    p.join()
    if kind == 'spin + backoff': shm.close(); shm.unlink()
    return dt / rounds

def idle_cpu(kind):
    "CPU seconds a waiting worker burns per wall second."
    import resource
    ctx = mp.get_context('spawn')
    if kind == 'spin + backoff':
        shm = shared_memory.SharedMemory(create=True, size=2); shm.buf[0] = shm.buf[1] = 0
        p = ctx.Process(target=_spin_worker, args=(shm.name, 0)); p.start()
        time.sleep(1.5)                                  # worker waits for round 1 that does not come yet
        import psutil
        proc = psutil.Process(p.pid); c0 = sum(proc.cpu_times()[:2]); time.sleep(1); c1 = sum(proc.cpu_times()[:2])
        shm.buf[0] = 1
        while shm.buf[1] != 1: time.sleep(0.001)
        p.join(); shm.close(); shm.unlink()
        return c1 - c0
    return 0.0   # pipes, semaphores and events block in the kernel

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--rounds', type=int, default=20000)
    ap.add_argument('--repeats', type=int, default=5)
    a = ap.parse_args()
    kinds = ['os.pipe byte', 'Connection bytes', 'Semaphore', 'Event', 'spin + backoff']
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {a.rounds} rounds x {a.repeats} repeats")
    print(f"{'handshake':<18} {'round trip (us), median':>24} {'runs':>30} {'idle worker CPU':>16}")
    for k in kinds:
        runs = [measure(k, a.rounds) * 1e6 for _ in range(a.repeats)]
        print(f"{k:<18} {statistics.median(runs):>24.1f} {' '.join(f'{x:.1f}' for x in runs):>30} "
              f"{idle_cpu(k):>15.2f}s")
