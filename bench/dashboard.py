#!/usr/bin/env python
"""What the live notebook dashboard costs: training throughput with and without it, in one run, in a real kernel.

A Jupyter kernel is started (jupyter_client, the python3 kernelspec of this environment) and, as a notebook would,
runs `reaver_nb.train(...)` several times alternately with `dashboard=False` and `dashboard=True`, on the same
configuration in the same kernel. The widget messages go to this script, which plays the frontend's part of
reading them (it does not render them: a browser's drawing happens in the browser, not in the training kernel).
Both modes log a row every `--log-seconds` (the dashboard asks for 5 s), so the only difference is the dashboard.

Throughput of one run = frames between its first and its last log row / seconds between them, which leaves out XLA
compilation and the first rows. The ratio is the median over runs with the dashboard / the median without it;
target: >= 0.95 (at most 5% slower).

    python bench/dashboard.py                       # jax:MoveToBeacon (the quickstart's env), 3 + 3 runs
    python bench/dashboard.py --env CartPole-v1 --agent ppo --steps 200000
    python bench/dashboard.py --quick               # a smoke run, numbers not meaningful
"""
from __future__ import annotations
import argparse, json, platform, statistics, sys, textwrap, time

TARGET = 0.95


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--env', default='jax:MoveToBeacon')
    p.add_argument('--agent', default='a2c')
    p.add_argument('--steps', type=int, default=64_000, help='frames per run')
    p.add_argument('--n-envs', type=int, default=16)
    p.add_argument('--repeats', type=int, default=3, help='runs per mode (alternating)')
    p.add_argument('--log-seconds', type=float, default=5.)
    p.add_argument('--gin-param', action='append', default=[])
    p.add_argument('--quick', action='store_true')
    p.add_argument('--json', default=None, help='also write the results here')
    a = p.parse_args(argv)
    if a.quick:
        a.steps, a.repeats, a.n_envs = 8192, 1, 4
        a.gin_param += ['A2C.traj_len = 8', 'SC2Settings.screen_size = 8', 'SC2Settings.minimap_size = 8']
        a.log_seconds = 1.
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name='python3')
    widget_msgs = 0
    def run(code):
        nonlocal widget_msgs
        out, err = [], []
        def hook(msg):
            nonlocal widget_msgs
            t, c = msg['msg_type'], msg['content']
            if t.startswith('comm_'): widget_msgs += 1
            elif t == 'stream': out.append(c['text'])
            elif t == 'error': err.append('\n'.join(c['traceback']))
        reply = kc.execute_interactive(code, output_hook=hook, timeout=3600)
        if reply['content']['status'] != 'ok': raise RuntimeError(''.join(err) or str(reply['content']))
        return ''.join(out)
    try:
        # rows every --log-seconds (the first chunk of the fused trainer runs log_every updates: keep it short)
        params = a.gin_param + [f'RunSettings.log_seconds = {a.log_seconds}', 'RunSettings.log_every = 20']
        run(textwrap.dedent(f"""
            import json, tempfile, time, reaver_nb
            from pathlib import Path
            from reaver_nb.ui.dashboard import Dashboard
            results = Path(tempfile.mkdtemp())
            def once(i, dash):
                d = Dashboard() if dash else False
                out = reaver_nb.train({a.env!r}, {a.agent!r}, steps={a.steps}, n_envs={a.n_envs}, run_id=f'r{{i}}',
                                      results_dir=results, gin_params={params!r}, verbose=False, dashboard=d,
                                      progress=False)
                rows = [json.loads(l) for l in (results / f'r{{i}}' / 'metrics.jsonl').read_text().splitlines()]
                (f0, t0), (f1, t1) = (rows[0]['frames'], rows[0]['time']), (rows[-1]['frames'], rows[-1]['time'])
                extra = dict(draws=d.draws, draw_s=d.draw_seconds) if dash else {{}}
                if len(rows) < 3: raise RuntimeError(f'only {{len(rows)}} log rows: train longer (--steps)')
                return json.dumps(dict(dashboard=dash, fps=(f1 - f0) / (t1 - t0), rows=len(rows), wall=out['time'], **extra))
        """))
        runs = []
        for i in range(2 * a.repeats + 1):
            dash = i % 2 == 1            # run 0 (without) also warms up caches; then alternate
            line = run(f"print(once({i}, {dash}))").strip().splitlines()[-1]
            r = json.loads(line); r['warmup'] = i == 0
            runs.append(r)
            print(f"run {i}: {'with   ' if dash else 'without'} dashboard  {r['fps']:8.1f} frames/s  ({r['rows']} rows"
                  + (f", {r['draws']} redraws, {r['draw_s']:.2f} s drawing" if dash else '') + ')' + (' warm-up' if i == 0 else ''),
                  flush=True)
    finally:
        kc.stop_channels(); km.shutdown_kernel(now=True)
    without = [r['fps'] for r in runs if not r['dashboard'] and not r['warmup']]
    with_ = [r['fps'] for r in runs if r['dashboard']]
    ratio = statistics.median(with_) / statistics.median(without)
    print(f"\n{a.env} {a.agent.upper()}, {a.n_envs} envs, {a.steps:,} frames per run, a row every {a.log_seconds:g} s, "
          f"{platform.processor() or platform.machine()}, {widget_msgs} widget messages read")
    print(f"median frames/s without the dashboard {statistics.median(without):.1f}, with it {statistics.median(with_):.1f}: "
          f"ratio {ratio:.3f} (target >= {TARGET}: {'met' if ratio >= TARGET else 'NOT met'})")
    if a.json:
        with open(a.json, 'w') as f: json.dump(dict(args=vars(a), runs=runs, ratio=ratio), f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
