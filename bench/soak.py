"""Soak test of the host training path: `reaver train` with ShmVectorEnv for a given time, killed at random.

A script, not a test. It starts `reaver train` (gymnasium CartPole-v1, PPO, 4 envs in 2 env worker processes by
default) and, at random intervals, SIGKILLs either one env worker process (a child of the trainer; the vector env
restarts it, up to RunSettings.max_restarts, set very high here) or the trainer itself (then it runs
`reaver train --resume --run-id soak ...`, which continues from the last checkpoint). Meanwhile it samples the
trainer's RSS and its children's, its open file descriptors, the /dev/shm segments (all of them, and those the
trainer and its workers map), fault files (`reaver_worker*`) in the trainer's temp folder (a private TMPDIR under the
output folder) and in the system's, and stale `.*.tmp` files in the run folder (older than 10 s). At the end it reads
the run's metrics.jsonl for rows with duplicated frames, stops the trainer with SIGINT (a checkpoint, a clean exit),
and reports a table on stdout and a JSON file:

- frames lost per trainer kill: frames of the last metrics row written before the kill minus the frames of the
  checkpoint the resume starts from (frames reached but not yet logged are not counted: at most log_every updates);
- per worker kill: the time until the replacement worker is up, an estimate of the frames lost (that time x the
  frames/s of the last row) and whether the frame counter went on from where it was;
- kills survived: a worker kill when the same trainer logs a later row, a trainer kill when the resumed one does;
- RSS, /dev/shm segments, open files and fault files at start (first sample after the first row), at the end
  (last sample before the stop) and after the stop.

It pins itself and everything it starts to `--cpus` cores (1 by default: about one core of load) and stops by
itself. On exit, Ctrl-C or SIGTERM included, it stops the trainer, kills every process it has seen under the
trainer (by pid) that is still alive, and unlinks any /dev/shm segment the trainer mapped that outlived it (the JSON
reports them as leaks first). The trainer dies with the soak (PR_SET_PDEATHSIG), even if the soak is SIGKILLed.

    python bench/soak.py                       # one hour
    python bench/soak.py --minutes 5           # a short run
    nohup nice -n 10 python bench/soak.py > soak.log 2>&1 &
"""
import argparse, ctypes, glob, json, os, random, signal, statistics, subprocess, sys, tempfile, time
from pathlib import Path
import psutil

WORKER = 'reaver_nb.envs.shm_worker'
RUN_ID = 'soak'


def _die_with_parent():
    "preexec_fn: the trainer gets SIGKILL when the soak dies, however it dies."
    try: ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, signal.SIGKILL)    # PR_SET_PDEATHSIG
    except (OSError, AttributeError): pass


def _alive(p: psutil.Process) -> bool:
    try: return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error: return False


def _is_worker(p: psutil.Process) -> bool:
    try: return WORKER in ' '.join(p.cmdline())
    except psutil.Error: return False


def _shm_maps(pid: int) -> set:
    "Names of the /dev/shm files process `pid` maps."
    try:
        with open(f'/proc/{pid}/maps') as f:
            return {line.split('/dev/shm/', 1)[1].split(' (deleted)')[0].strip() for line in f if '/dev/shm/' in line}
    except OSError: return set()


def _ckpt_frames(ckpt_dir: Path) -> int | None:
    names = sorted(p.name for p in ckpt_dir.glob('ckpt_*.msgpack')) if ckpt_dir.is_dir() else []
    return int(names[-1][5:15]) if names else None


class Rows:
    "Reads metrics.jsonl as it grows."
    def __init__(self, path: Path):
        self.path, self.offset, self.buf = path, 0, b''
        self.last = None              # the last row read
        self.count = 0
        self.recent = []              # (trainer time, frames) of the last rows

    def fps(self, n: int = 50) -> float | None:
        "Frames per second of the trainer's clock: the median over the last `n` intervals between rows."
        rates = [(f1 - f0) / (t1 - t0) for (t0, f0), (t1, f1) in zip(self.recent[-n - 1:], self.recent[-n:])
                 if t1 > t0 and f1 > f0]
        return statistics.median(rates) if rates else None

    def poll(self) -> list:
        try:
            with open(self.path, 'rb') as f:
                f.seek(self.offset); data = f.read()
        except OSError: return []
        self.offset += len(data)
        *lines, self.buf = (self.buf + data).split(b'\n')
        rows = []
        for line in lines:
            try: rows.append(json.loads(line))
            except ValueError: continue
        for r in rows:
            if self.recent and r['frames'] <= self.recent[-1][1]: self.recent = []     # a resumed trainer
            self.recent.append((r['time'], r['frames']))
        self.recent = self.recent[-400:]
        if rows: self.last = rows[-1]; self.count += len(rows)
        return rows


class Soak:
    def __init__(self, a):
        self.a, self.rng = a, random.Random(a.seed)
        self.out = Path(a.out_dir or tempfile.mkdtemp(prefix='reaver_soak_')).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.results, self.tmp = self.out / 'results', self.out / 'tmp'
        if (self.results / RUN_ID).exists(): sys.exit(f"{self.results / RUN_ID} exists: give a new --out-dir.")
        self.tmp.mkdir(exist_ok=True)
        self.run_dir = self.results / RUN_ID
        self.rows = Rows(self.run_dir / 'metrics.jsonl')
        self.trainer = None; self.incarnation = -1; self.inc_start = 0.
        self.inc_first_row = False
        self.seen = {}                # pid -> psutil.Process: everything seen under a trainer, killed on exit if alive
        self.segments = set()         # /dev/shm names mapped by a trainer or its workers
        self.samples, self.kills, self.events = [], [], []
        self.t0 = time.monotonic()

    # --- the trainer ------------------------------------------------------------------------------------------------
    def command(self, resume: bool) -> list:
        base = [sys.executable, '-m', 'reaver_nb', 'train', '--run-id', RUN_ID, '--results-dir', str(self.results),
                '--quiet']
        if resume: return base + ['--resume']
        a = self.a
        params = [f'RunSettings.vector_env = "shm"', f'RunSettings.n_workers = {a.n_workers}',
                  'RunSettings.max_restarts = 1000000000', f'RunSettings.log_every = {a.log_every}',
                  f'RunSettings.checkpoint_every = {a.checkpoint_every}',
                  f'RunSettings.checkpoint_minutes = {a.checkpoint_minutes}', *a.gin_param]
        return base + ['--env', a.env, '--agent', a.agent, '--n-envs', str(a.n_envs), '--steps', str(10 ** 9),
                       *[x for p in params for x in ('--gin-param', p)]]

    def start(self, resume: bool):
        self.incarnation += 1
        env = dict(os.environ, TMPDIR=str(self.tmp), PYTHONUNBUFFERED='1', PYTHONWARNINGS='always::RuntimeWarning')
        env.setdefault('JAX_PLATFORMS', 'cpu')
        log = open(self.out / f'trainer_{self.incarnation}.log', 'wb')
        cmd = self.command(resume)
        self.trainer = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                        start_new_session=True, preexec_fn=_die_with_parent)
        log.close()
        self.seen[self.trainer.pid] = psutil.Process(self.trainer.pid)
        self.inc_start, self.inc_first_row = self.now(), False
        self.event('start', incarnation=self.incarnation, pid=self.trainer.pid, cmd=' '.join(cmd))

    def now(self) -> float: return round(time.monotonic() - self.t0, 3)

    def event(self, what, **kw):
        e = dict(t=self.now(), what=what, **kw); self.events.append(e)
        print(f"[{e['t']:8.1f}s] {what} " + ' '.join(f'{k}={v}' for k, v in kw.items() if k != 'cmd'), flush=True)

    def descendants(self) -> list:
        if self.trainer is None or self.trainer.poll() is not None: return []
        try: kids = self.seen[self.trainer.pid].children(recursive=True)
        except psutil.Error: return []
        for k in kids: self.seen.setdefault(k.pid, k)
        return [k for k in kids if _alive(k)]

    def workers(self) -> list: return [p for p in self.descendants() if _is_worker(p)]

    def track_segments(self):
        if self.trainer is None or self.trainer.poll() is not None: return
        for p in [self.seen[self.trainer.pid], *self.workers()]: self.segments |= _shm_maps(p.pid)

    def read_rows(self):
        for r in self.rows.poll():
            if self.trainer is not None and self.trainer.poll() is None: self.inc_first_row = True
        return self.rows.last

    def wait_row(self, above: int, timeout: float):
        "Wait for a metrics row with frames > `above` from the running trainer; returns it, or None."
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for r in self.rows.poll():
                self.inc_first_row = True
                if r['frames'] > above: return r
            if self.trainer.poll() is not None: return None
            time.sleep(0.1)
        return None

    # --- measurements -------------------------------------------------------------------------------------------------
    def stale_tmp(self) -> dict:
        out, cut = {'ckpt': 0, 'other': 0}, time.time() - 10
        for p in self.run_dir.rglob('.*.tmp') if self.run_dir.exists() else []:
            try:
                if p.stat().st_mtime < cut: out['ckpt' if p.name.startswith('.ckpt_') else 'other'] += 1
            except OSError: pass
        return out

    def sample(self, tag='') -> dict:
        self.track_segments()
        s = dict(t=self.now(), tag=tag, incarnation=self.incarnation, trainer_rss_mb=None, children_rss_mb=None,
                 n_children=None, n_workers=None, open_fds=None)
        if self.trainer is not None and self.trainer.poll() is None:
            try:
                t = self.seen[self.trainer.pid]
                s['trainer_rss_mb'] = round(t.memory_info().rss / 2**20, 1)
                s['open_fds'] = t.num_fds()
                kids = self.descendants()
                rss = 0
                for k in kids:
                    try: rss += k.memory_info().rss
                    except psutil.Error: pass
                s.update(children_rss_mb=round(rss / 2**20, 1), n_children=len(kids),
                         n_workers=sum(_is_worker(k) for k in kids))
            except psutil.Error: pass
        shm = os.listdir('/dev/shm') if os.path.isdir('/dev/shm') else []
        stale = self.stale_tmp()
        s.update(shm_all=len(shm), shm_ours=len(self.segments & set(shm)),
                 fault_files=len(glob.glob(str(self.tmp / 'reaver_worker*'))),
                 fault_files_system_tmp=len(glob.glob(os.path.join(tempfile.gettempdir(), 'reaver_worker*'))),
                 stale_ckpt_tmp=stale['ckpt'], stale_other_tmp=stale['other'],
                 frames=self.rows.last['frames'] if self.rows.last else None)
        self.samples.append(s)
        return s

    # --- kills --------------------------------------------------------------------------------------------------------
    def kill_worker(self):
        ws = self.workers()
        if not ws: return
        self.read_rows()
        last = self.rows.last or dict(frames=0, time=0.)
        before, fps = last['frames'], self.rows.fps()
        victim = self.rng.choice(ws)
        old = {w.pid for w in ws}
        k = dict(kind='worker', t=self.now(), incarnation=self.incarnation, pid=victim.pid, frames_before=before)
        t = time.monotonic()
        try: victim.kill()
        except psutil.Error: return
        spawn = None
        while time.monotonic() - t < 60 and self.trainer.poll() is None:
            if any(w.pid not in old for w in self.workers()): spawn = time.monotonic() - t; break
            time.sleep(0.02)
        row = self.wait_row(before, 120) if self.trainer.poll() is None else None
        # the stall: the longest interval between rows (trainer's clock) over the 2 s after the kill, less the time its
        # frames take at the median rate of the rows before; frames lost: the stall at that rate
        after = [(last['time'], before)]
        while row and time.monotonic() - t < 2 and self.trainer.poll() is None:
            after += [(r['time'], r['frames']) for r in self.rows.poll()]; time.sleep(0.05)
        stall = None
        if row and fps and len(after) > 1:
            stall = max(t1 - t0 - (f1 - f0) / fps for (t0, f0), (t1, f1) in zip(after, after[1:]))
        k.update(spawn_s=None if spawn is None else round(spawn, 3),
                 est_frames_lost=None if stall is None else int(round(stall * fps)),
                 stall_s=None if stall is None else round(stall, 3), fps_before=fps and round(fps),
                 frames_after=row['frames'] if row else None,
                 counter_went_on=bool(row and row['frames'] > before),
                 survived=bool(row) and self.trainer.poll() is None)
        self.kills.append(k)
        self.event('kill worker', pid=victim.pid, spawn_s=k['spawn_s'], stall_s=k['stall_s'],
                   est_frames_lost=k['est_frames_lost'], survived=k['survived'])

    def kill_trainer(self):
        self.track_segments()
        ws = self.workers()
        others = [p for p in self.descendants() if not _is_worker(p)]      # the resource tracker
        segs = set(self.segments)
        t = time.monotonic()
        pid = self.trainer.pid
        self.trainer.kill(); self.trainer.wait()
        self.read_rows()
        logged = self.rows.last['frames'] if self.rows.last else 0
        gone, alive = psutil.wait_procs(ws + others, timeout=30)
        workers_exit_s = round(time.monotonic() - t, 3)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(os.path.exists(f'/dev/shm/{n}') for n in segs): time.sleep(0.1)
        left = sorted(n for n in segs if os.path.exists(f'/dev/shm/{n}'))
        shm_gone_s = None if left else round(time.monotonic() - t, 3)
        ckpt = _ckpt_frames(self.run_dir / 'checkpoints')
        stale = self.stale_tmp()
        stale_now = sum(1 for _ in self.run_dir.rglob('.ckpt_*.tmp'))
        k = dict(kind='trainer', t=self.now(), incarnation=self.incarnation, pid=pid, frames_logged=logged,
                 resumed_from=ckpt, frames_lost=None if ckpt is None else logged - ckpt,
                 processes_left_after_30s=[p.pid for p in alive], exit_s=workers_exit_s, shm_left_after_30s=left,
                 shm_gone_s=shm_gone_s, segments=sorted(segs),
                 ckpt_tmp_files=stale_now, stale_ckpt_tmp=stale['ckpt'],
                 fault_files=len(glob.glob(str(self.tmp / 'reaver_worker*'))))
        for p in alive:
            try: p.kill()
            except psutil.Error: pass
        self.start(resume=True)
        t = time.monotonic()
        row = self.wait_row(ckpt or 0, 600)
        k.update(resume_s=round(time.monotonic() - t, 1) if row else None, frames_after=row['frames'] if row else None,
                 survived=bool(row))
        self.kills.append(k)
        self.event('kill trainer', pid=pid, frames_logged=logged, resumed_from=ckpt, frames_lost=k['frames_lost'],
                   resume_s=k['resume_s'], exit_s=workers_exit_s, shm_gone_s=shm_gone_s, fault_files=k['fault_files'],
                   survived=k['survived'])

    # --- the run --------------------------------------------------------------------------------------------------
    def run(self):
        a = self.a
        end = time.monotonic() + 60 * a.minutes
        self.start(resume=False)
        next_sample, next_kill = time.monotonic(), time.monotonic() + self.rng.uniform(*a.kill_every)
        failures = 0
        while time.monotonic() < end:
            rc = self.trainer.poll()
            if rc is not None:
                tail = (self.out / f'trainer_{self.incarnation}.log').read_text(errors='replace')[-2000:]
                self.event('trainer exited by itself', rc=rc, log=f'trainer_{self.incarnation}.log')
                print(tail, flush=True)
                failures += 1
                if failures >= 3: self.event('giving up: the trainer keeps exiting'); break
                self.start(resume=True); continue
            self.read_rows()
            if self.inc_first_row: failures = 0
            if time.monotonic() >= next_sample:
                self.sample(); next_sample = time.monotonic() + a.sample_every
            if time.monotonic() >= next_kill and self.inc_first_row and end - time.monotonic() > 30:
                if self.rng.random() < a.trainer_share: self.kill_trainer()
                else: self.kill_worker()
                next_kill = time.monotonic() + self.rng.uniform(*a.kill_every)
            time.sleep(0.2)

    def stop(self):
        "SIGINT: the trainer saves a checkpoint, closes its vector env and exits."
        if self.trainer is None or self.trainer.poll() is not None: return
        self.read_rows(); self.sample('before stop')
        ws = self.workers(); self.track_segments()
        self.trainer.send_signal(signal.SIGINT)
        try: rc = self.trainer.wait(timeout=120)
        except subprocess.TimeoutExpired: self.trainer.kill(); rc = self.trainer.wait()
        psutil.wait_procs(ws, timeout=30)
        self.event('stopped trainer', rc=rc)

    def cleanup(self) -> dict:
        "Kill whatever is left of what the soak started; unlink the segments the trainer mapped; report what that was."
        if self.trainer is not None and self.trainer.poll() is None:
            self.trainer.kill(); self.trainer.wait()
        left = [p for p in self.seen.values() if _alive(p)]
        deadline = time.monotonic() + 15
        while left and time.monotonic() < deadline:
            time.sleep(0.2); left = [p for p in left if _alive(p)]
        for p in left:
            try: p.kill()
            except psutil.Error: pass
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(os.path.exists(f'/dev/shm/{n}') for n in self.segments):
            time.sleep(0.2)
        shm_left = sorted(n for n in self.segments if os.path.exists(f'/dev/shm/{n}'))
        for n in shm_left:
            try: os.unlink(f'/dev/shm/{n}')
            except OSError: pass
        return dict(processes_killed_at_exit=[p.pid for p in left], shm_unlinked_at_exit=shm_left,
                    fault_files_left=sorted(os.path.basename(p) for p in glob.glob(str(self.tmp / 'reaver_worker*'))))

    # --- the report ---------------------------------------------------------------------------------------------------
    def metrics_check(self) -> dict:
        frames = []
        try:
            for line in open(self.run_dir / 'metrics.jsonl'):
                try: frames.append(json.loads(line)['frames'])
                except (ValueError, KeyError): pass
        except OSError: pass
        back = sum(1 for x, y in zip(frames, frames[1:]) if y <= x)
        return dict(rows=len(frames), duplicated_frames_rows=len(frames) - len(set(frames)),
                    rows_not_after_the_previous=back, last_frames=frames[-1] if frames else None)


def _stats(xs):
    xs = [x for x in xs if x is not None]
    if not xs: return '-'
    return f"mean {statistics.mean(xs):,.0f}, median {statistics.median(xs):,.0f}, max {max(xs):,.0f} (n={len(xs)})"


def report(s: Soak, extra: dict, interrupted: bool) -> dict:
    a = s.a
    steady = [x for x in s.samples if x['trainer_rss_mb'] is not None and x['frames'] is not None and not x['tag']]
    first, last = (steady[0], steady[-1]) if steady else ({}, {})
    after = s.sample('after stop')
    wk = [k for k in s.kills if k['kind'] == 'worker']
    tk = [k for k in s.kills if k['kind'] == 'trainer']
    inc_growth = {}
    for x in steady: inc_growth.setdefault(x['incarnation'], []).append(x)
    growth = [(i, xs[-1]['trainer_rss_mb'] - xs[0]['trainer_rss_mb'], xs[-1]['t'] - xs[0]['t'])
              for i, xs in inc_growth.items() if len(xs) > 1]
    longest = max(growth, key=lambda g: g[2]) if growth else None
    m = s.metrics_check()
    restarts = sum(f.read_text(errors='replace').count('restarting it (') for f in s.out.glob('trainer_*.log'))
    def mx(key): return max((x[key] for x in s.samples if x.get(key) is not None), default=None)
    summary = dict(
        minutes=a.minutes, wall_s=s.now(), interrupted=interrupted, trainer_incarnations=s.incarnation + 1,
        worker_kills=len(wk), worker_kills_survived=sum(k['survived'] for k in wk),
        trainer_kills=len(tk), trainer_kills_survived=sum(k['survived'] for k in tk),
        frames_lost_per_trainer_kill=[k['frames_lost'] for k in tk],
        worker_stall_s=[k['stall_s'] for k in wk], est_frames_lost_per_worker_kill=[k['est_frames_lost'] for k in wk],
        worker_restarts_in_trainer_logs=restarts,
        worker_kills_with_counter_going_back=sum(1 for k in wk if k['frames_after'] is not None and not k['counter_went_on']),
        processes_left_30s_after_trainer_kill=sum(len(k['processes_left_after_30s']) for k in tk),
        shm_left_30s_after_trainer_kill=sum(len(k['shm_left_after_30s']) for k in tk),
        start=first, end=last, after_stop=after, max=dict(trainer_rss_mb=mx('trainer_rss_mb'),
            children_rss_mb=mx('children_rss_mb'), open_fds=mx('open_fds'), shm_ours=mx('shm_ours'),
            fault_files=mx('fault_files'), stale_ckpt_tmp=mx('stale_ckpt_tmp')),
        rss_growth_longest_incarnation=None if not longest else dict(incarnation=longest[0], mb=round(longest[1], 1),
                                                                     over_s=round(longest[2], 1)),
        metrics=m, **extra)
    rows = [
        ('run', f"{summary['wall_s'] / 60:.1f} min, {summary['trainer_incarnations']} trainer processes, "
                f"{m['last_frames'] or 0:,} frames at the end" + (' (interrupted)' if interrupted else '')),
        ('worker kills survived', f"{summary['worker_kills_survived']} / {len(wk)} "
                                  f"({restarts} restarts reported by the trainers)"),
        ('trainer kills survived', f"{summary['trainer_kills_survived']} / {len(tk)}"),
        ('frames lost per trainer kill', _stats(summary['frames_lost_per_trainer_kill'])),
        ('trainer stall per worker kill', _stats([None if x is None else x * 1000 for x in summary['worker_stall_s']])
                                         .replace(' (n=', ' ms (n=')),
        ('est. frames lost per worker kill', _stats(summary['est_frames_lost_per_worker_kill'])),
        ('worker kills, frame counter went back', str(summary['worker_kills_with_counter_going_back'])),
        ('processes / shm left 30 s after trainer kills', f"{summary['processes_left_30s_after_trainer_kill']} / "
                                                          f"{summary['shm_left_30s_after_trainer_kill']}"),
    ]
    def three(key):
        f = lambda v: '-' if v is None else f'{v:g}'
        return f"{f(first.get(key))} -> {f(last.get(key))} (max {f(mx(key))}; after stop {f(after.get(key))})"
    rows += [
        ('trainer RSS MB start -> end', three('trainer_rss_mb')),
        ('children RSS MB start -> end', three('children_rss_mb')),
        ('trainer open fds start -> end', three('open_fds')),
        ('/dev/shm segments, ours', three('shm_ours')),
        ('/dev/shm segments, all', three('shm_all')),
        ('fault files (trainer TMPDIR)', three('fault_files')),
        ('fault files (system temp folder)', three('fault_files_system_tmp')),
        ('stale .ckpt_*.tmp files', three('stale_ckpt_tmp')),
        ('RSS growth, longest trainer life', '-' if not longest else f"{longest[1]:+.1f} MB over {longest[2] / 60:.1f} min"),
        ('metrics.jsonl rows', f"{m['rows']:,}"),
        ('rows with duplicated frames', f"{m['duplicated_frames_rows']:,}"),
        ('rows not after the previous one', f"{m['rows_not_after_the_previous']:,}"),
        ('processes killed / shm unlinked at exit', f"{len(extra['processes_killed_at_exit'])} / "
                                                     f"{len(extra['shm_unlinked_at_exit'])}"),
    ]
    w = max(len(r[0]) for r in rows)
    print('\n| what' + ' ' * (w - 4) + ' | value |\n|' + '-' * (w + 2) + '|-------|')
    for k, v in rows: print(f"| {k:<{w}} | {v} |")
    out = dict(summary=summary, kills=s.kills, samples=s.samples, events=s.events, args=vars(a),
               out_dir=str(s.out), run_dir=str(s.run_dir))
    path = Path(a.json) if a.json else s.out / 'soak.json'
    path.write_text(json.dumps(out, indent=1))
    print(f"\nJSON: {path}\nrun folder: {s.run_dir}  trainer logs: {s.out}/trainer_*.log", flush=True)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument('--minutes', type=float, default=60., help='how long to train and kill')
    p.add_argument('--env', default='CartPole-v1'); p.add_argument('--agent', default='ppo')
    p.add_argument('--n-envs', type=int, default=4); p.add_argument('--n-workers', type=int, default=2)
    p.add_argument('--log-every', type=int, default=4, help='RunSettings.log_every (updates between metrics rows)')
    p.add_argument('--checkpoint-every', type=int, default=20, help='RunSettings.checkpoint_every (updates)')
    p.add_argument('--checkpoint-minutes', type=float, default=10., help='RunSettings.checkpoint_minutes')
    p.add_argument('--gin-param', action='append', default=['PPO.minibatch_size = 64'],
                   help='more bindings for the trainer (repeatable)')
    p.add_argument('--kill-every', type=float, nargs=2, default=(20., 60.), metavar=('MIN', 'MAX'),
                   help='seconds between kills, drawn uniformly')
    p.add_argument('--trainer-share', type=float, default=0.3, help='share of the kills that hit the trainer')
    p.add_argument('--sample-every', type=float, default=5., help='seconds between samples')
    p.add_argument('--cpus', type=int, default=1, help='cores to pin the soak and the trainer to (0: no pinning)')
    p.add_argument('--seed', type=int, default=0, help='seed of the kill schedule')
    p.add_argument('--out-dir', default=None, help='output folder (default: a new reaver_soak_* in the temp folder)')
    p.add_argument('--json', default=None, help='the JSON report (default: OUT_DIR/soak.json)')
    a = p.parse_args(argv)
    if a.cpus > 0:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cpus[-a.cpus:])
    signal.signal(signal.SIGINT, signal.default_int_handler)      # also when started in the background (SIG_IGN)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGHUP, signal.default_int_handler)
    s = Soak(a)
    print(f"soak: {a.minutes:g} min, out {s.out}, cpus {sorted(os.sched_getaffinity(0))}, pid {os.getpid()}", flush=True)
    interrupted = False
    try:
        try: s.run()
        except KeyboardInterrupt:
            interrupted = True; s.event('interrupted: stopping the trainer')
        s.stop()
    except KeyboardInterrupt: interrupted = True     # a second Ctrl-C during the stop: the cleanup still runs
    finally:
        extra = s.cleanup()
    report(s, extra, interrupted)
    return 0


if __name__ == '__main__':
    sys.exit(main())
