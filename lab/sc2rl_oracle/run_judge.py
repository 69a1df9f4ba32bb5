#!/usr/bin/env python
"""Run SC2-RL's own A2C (run.py) or IMPALA (monobeast.py) from a checkout, unchanged, with only the env swapped.

    $JUDGE_VENV/bin/python lab/sc2rl_oracle/run_judge.py --checkout $SC2RL --map MoveToBeacon \
        --algo a2c --seed 0 --steps 600000 [--out DIR] [--env-module reaver_nb.envs.pysc2_env:SC2Env]

`pysc2.env.sc2_env.SC2Env` is replaced by the class named by --env-module before SC2-RL's code runs; SC2-RL calls
`sc2_env.SC2Env(**game_params)` at call time (SC_Utils/train_v2.py:60, monobeast.py:143), so it builds the swapped
class with exactly the keywords it passes to the real game. The run uses the final configuration of the map's logged
runs (sc2rl_runs.py: resolution, lr, entropy, trajectory, test interval, process count) and writes SC2-RL's own
`#Steps,score` log to DIR/<Map>/Logging/<ID>.txt (IMPALA: its logs.csv converted to that format), plus
DIR/run_info.json (config, patches, versions, timing). --steps counts SC2-RL's logged steps (A2C: one per step of all
processes together, so frames = steps x processes; IMPALA: unroll length per optimizer step, frames = steps x batch).

The other patches (none edits a file of the checkout) are listed in PATCHES below and in the README: pysc2 4.0.0 on
Python 3.11/protobuf 7 through reaver_nb's compat layer, numpy >= 1.24's removed `np.int` alias and ragged
`np.stack`, and the start method of the A2C's worker processes made explicit.

`--env-module pysc2.env.mock_sc2_env:SC2TestEnv` (pysc2's mock: 10-step episodes of an all-zero observation, reward
0) is for testing the plumbing only; an adapter here gives it SC2Env's constructor.
"""
from __future__ import annotations
import argparse, tempfile, csv, importlib, importlib.util, inspect, json, os, platform, random, sys, time, types
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path: sys.path.insert(0, str(HERE))
import sc2rl_runs as R  # noqa: E402

SPEC_VAR = 'SC2RL_JUDGE_SPEC'          # how spawned worker processes learn what to install (json)
DEFAULT_ENV = 'reaver_nb.envs.pysc2_env:SC2Env'
MOCK_ENV = 'pysc2.env.mock_sc2_env:SC2TestEnv'

PATCHES = [
    dict(what="pysc2.env.sc2_env.SC2Env = <--env-module class>",
         why="the swap itself: SC2-RL looks SC2Env up on the module at call time (SC_Utils/train_v2.py:60, "
             "SC_Utils/game_utils.py:17, monobeast.py:143)"),
    dict(what="reaver_nb.sc2.compat.import_pysc2() before SC2-RL imports pysc2",
         why="pysc2 4.0.0's s2clientprotocol _pb2 modules fail under protobuf >= 4, and pysc2.lib.colors calls "
             "random.shuffle(x, fn), removed in Python 3.11; it also marks absl flags parsed, which a spawned worker "
             "needs (run.py:50 parses them in the parent only)"),
    dict(what="numpy.int = int",
         why="numpy 1.24 removed the alias; AC_modules/BatchedA2C.py:277-278 (np.array([], dtype=np.int)) runs in "
             "every A2C update. numpy < 1.24 cannot be installed next to reaver_nb's jax 0.10"),
    dict(what="SC_Utils.train_v5.np = numpy with a ragged-safe stack (A2C only)",
         why="ParallelEnv.reset/step_wait (train_v5.py:122,124,133) np.stack a tuple of (spatial, player) pairs of "
             "different shapes; numpy < 1.24 made that an object array, numpy >= 1.24 raises ValueError. The "
             "stand-in builds the same object array and leaves every other call to numpy"),
    dict(what="torch.multiprocessing start method set explicitly (A2C, --start-method, default fork)",
         why="train_v5.py:102 uses the default context, fork on Linux up to Python 3.13 (what SC2-RL ran with); "
             "spawn is offered for an env that is not fork-safe. monobeast.py:419 asks for fork itself"),
    dict(what="sys.argv / argparse values set from the final configuration; cwd = --out",
         why="run.py and monobeast.py read their configuration from argparse; run.py writes under --save_dir "
             "(run.py:110-113,135-143) and the test env's replays to the relative 'Replays/' (train_v5.py:157-159)"),
    dict(what="seed S: random.seed, numpy.random.seed, torch.manual_seed in the parent",
         why="SC2-RL seeds nothing: the network init, the parent's sampling and the run ID (gen_PID) follow the "
             "seed; each worker reseeds numpy from OS entropy and draws its env seed from it (train_v5.py:44-45, "
             "monobeast.py:170), so runs are not bit-reproducible, as in SC2-RL"),
]


# --- what gets installed in this process and in every spawned worker ----------------------------------------------

def _ragged_safe_stack(np):
    "np.stack that, where numpy >= 1.24 refuses a ragged element, builds the object array numpy < 1.24 built."
    def stack(arrays, axis=0, out=None, **kw):
        try:
            return np.stack(arrays, axis=axis, out=out, **kw)
        except ValueError:
            objs = []
            for a in arrays:
                o = np.empty(len(a), dtype=object)
                for i, x in enumerate(a): o[i] = x
                objs.append(o)
            return np.stack(objs, axis=axis, out=out, **kw)
    return stack


class _NumpyWithRaggedStack(types.ModuleType):
    "numpy, except `stack` (above)."
    def __init__(self, np):
        super().__init__('numpy')
        self.__dict__['_np'] = np
        self.__dict__['stack'] = _ragged_safe_stack(np)

    def __getattr__(self, name):
        return getattr(self.__dict__['_np'], name)


def _describe(v):
    "JSON-friendly view of SC2Env's constructor values (AgentInterfaceFormat and Agent spelled out)."
    from pysc2.env import sc2_env
    if isinstance(v, sc2_env.Agent): return dict(Agent=dict(race=[getattr(r, 'name', str(r)) for r in v.race], name=v.name))
    if isinstance(v, dict): return {k: _describe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [_describe(x) for x in v]
    if isinstance(v, sc2_env.AgentInterfaceFormat):
        fd, rd = v.feature_dimensions, v.rgb_dimensions
        return dict(AgentInterfaceFormat=dict(
            feature_screen=list(fd.screen) if fd else None, feature_minimap=list(fd.minimap) if fd else None,
            rgb=[list(rd.screen), list(rd.minimap)] if rd else None, action_space=str(v.action_space),
            **{k: getattr(v, k, None) for k in (
                'use_feature_units', 'use_raw_units', 'use_unit_counts', 'use_camera_position',
                'camera_width_world_units', 'hide_specific_actions', 'action_delay_fn', 'send_observation_proto',
                'crop_to_playable_area', 'raw_crop_to_playable_area', 'allow_cheating_layers',
                'add_cargo_to_units', 'raw_resolution', 'max_raw_actions', 'max_selected_units')}))
    return v


def _record(path, **row):
    if not path: return
    row = {k: _describe(v) for k, v in row.items()}
    row['pid'] = os.getpid()
    with open(path, 'a') as f: f.write(json.dumps(row, default=repr) + '\n')


def mock_adapter():
    "pysc2's SC2TestEnv under SC2Env's constructor (it lacks `replay_prefix` and `battle_net_map`); records calls."
    from pysc2.env import mock_sc2_env
    base = mock_sc2_env.SC2TestEnv
    accepted = set(inspect.signature(base.__init__).parameters) - {'self'}

    class MockSC2Env(base):
        _steps_recorded = 0

        def __init__(self, **kw):
            log = os.environ.get('SC2RL_JUDGE_CALLS')
            _record(log, call='__init__', kwargs=kw)
            self.dropped_kwargs = {k: kw.pop(k) for k in list(kw) if k not in accepted}
            super().__init__(**kw)
            if os.environ.get('SC2RL_JUDGE_MOCK_EPISODE_LENGTH'):
                self.episode_length = int(os.environ['SC2RL_JUDGE_MOCK_EPISODE_LENGTH'])

        def step(self, actions, step_mul=None):
            log = os.environ.get('SC2RL_JUDGE_CALLS')
            a = actions[0] if actions else None
            if log and a is not None and MockSC2Env._steps_recorded < 6 and (
                    int(a.function) != 0 or MockSC2Env._steps_recorded == 0):
                MockSC2Env._steps_recorded += 1
                _record(log, call='step', n_actions=len(actions), function=int(a.function),
                        function_type=type(a.function).__name__,
                        arguments=[[(type(v).__name__, int(v)) for v in arg] for arg in a.arguments])
            return super().step(actions, step_mul)

    MockSC2Env.__name__ = MockSC2Env.__qualname__ = 'MockSC2Env'
    return MockSC2Env


def observations_through(cls, fix, suffix: str):
    "The env class `cls` with `fix(observation)` applied to every TimeStep's observation, from `reset` and `step`."
    class Fixed(cls):
        def reset(self): return [t._replace(observation=fix(t.observation)) for t in super().reset()]
        def step(self, actions, *args, **kw):
            return [t._replace(observation=fix(t.observation)) for t in super().step(actions, *args, **kw)]
    Fixed.__qualname__ = f'{cls.__qualname__}+{suffix}'
    return Fixed


def zeros_where_not_simulated(obs):
    """The feature layers the drop-in refuses read as zeros instead (its arrays are zero there): SC2-RL reads every
    layer it uses on every step, and the drop-in refuses `unit_density_aa` (the game's anti-aliased density, whose
    scale is not known). A deviation of the judge's observations, recorded in run_info.json."""
    for k in ('feature_screen', 'feature_minimap'):
        x = obs.get(k)
        if x is not None and hasattr(x, '_set'): x._set(None, [])    # a PartialArray: read as the zeros it holds
    return obs


def density_stand_in(obs, scale: int = 4):
    """A probe, not a simulation: the refused `unit_density_aa` replaced by `scale` x `unit_density`, a stand-in of
    the real layer's size (the real game's maxima at 16x16: 8 on CollectMineralShards, where unit_density's is 2, Part1
    cell 14; 16 on DefeatRoaches, Part11). It asks one question: does a raw input channel of that size, which SC2-RL
    feeds unscaled to its network and the judge otherwise reads as zeros, change how soon its A2C learns? Recorded in
    run_info.json as an observation deviation."""
    import numpy
    obs = zeros_where_not_simulated(obs)
    x = obs.get('feature_screen')
    if x is not None:
        names, v = list(x._index_names[0]), x.view(numpy.ndarray)
        v[names.index('unit_density_aa')] = numpy.minimum(255, scale * v[names.index('unit_density')])
    return obs


def resolve_env(spec: str, unsimulated: str = 'refuse'):
    if spec == MOCK_ENV: return mock_adapter()
    mod_name, _, attr = spec.partition(':')
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        hint = (' (the pysc2 drop-in is not built yet; for a plumbing test use --env-module ' + MOCK_ENV + ')'
                if spec == DEFAULT_ENV else '')
        raise SystemExit(f'--env-module {spec}: {e}{hint}')
    cls = getattr(mod, attr or 'SC2Env')
    if unsimulated == 'density-x4': return observations_through(cls, density_stand_in, 'density-x4')
    return observations_through(cls, zeros_where_not_simulated, 'zeros') if unsimulated == 'zeros' else cls


def install(spec: dict):
    "Apply every patch of PATCHES that a process needs before SC2-RL's code runs in it."
    ck = spec['checkout']
    if ck not in sys.path: sys.path.insert(0, ck)
    from reaver_nb.sc2.compat import import_pysc2
    import_pysc2()
    import numpy
    if 'int' not in numpy.__dict__: numpy.int = int
    import pysc2.env.sc2_env as sc2_env
    if not hasattr(sc2_env, '_judge_original_SC2Env'):
        sc2_env._judge_original_SC2Env = sc2_env.SC2Env
    cls = resolve_env(spec['env_module'], spec.get('unsimulated', 'refuse'))
    sc2_env.SC2Env = cls
    if spec['algo'] == 'a2c':
        import SC_Utils.train_v5 as t5
        if not isinstance(t5.np, _NumpyWithRaggedStack): t5.np = _NumpyWithRaggedStack(numpy)
    return cls


# A spawned worker imports this file as __mp_main__ before it unpickles SC2-RL's worker function: install there too.
if __name__ != '__main__' and os.environ.get(SPEC_VAR):
    install(json.loads(os.environ[SPEC_VAR]))


# --- configuration -------------------------------------------------------------------------------------------------

def a2c_config(m: str, procs=None, test_interval=None) -> dict:
    c = R.A2C_RUNS[m]
    cfg = dict(R.A2C_COMMON, res=c['res'], lr=c['lr'], H=c['H'], test_interval=c['test_interval'],
               logged_ids=list(c['ids']), final=c['final'], logged_max_train_steps=c['max_train_steps'],
               procs=c['procs'] or R.A2C_FINAL_PROCS,
               procs_source=c['procs_source'] if c['procs'] else
               f"unknown for {m}; assumed {R.A2C_FINAL_PROCS} like the final runs", source=c['source'])
    dev = []
    if procs is not None and procs != cfg['procs']:
        dev.append(f"processes {procs} instead of the logged config's {cfg['procs']}"); cfg['procs'] = procs
    if test_interval is not None and test_interval != cfg['test_interval']:
        dev.append(f"test interval {test_interval} instead of {cfg['test_interval']}")
        cfg['test_interval'] = test_interval
    cfg['deviations'] = dev
    return cfg


def impala_config(m: str, num_actors=None) -> dict:
    if m not in R.IMPALA_RUNS: raise SystemExit(f'{m}: SC2-RL logged no monobeast IMPALA run on it (Part21)')
    c = R.IMPALA_RUNS[m]
    cfg = dict(R.IMPALA_COMMON, logged_ids=list(c['xpids']), logged_total_steps=c['total_steps'],
               source=c['source'], deviations=[])
    if num_actors is not None and num_actors != cfg['num_actors']:
        cfg['deviations'].append(f"num_actors {num_actors} instead of {cfg['num_actors']}")
        cfg['num_actors'] = num_actors
        cfg['num_buffers'] = max(cfg['num_buffers'], num_actors + 1)
    return cfg


def load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, str(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# --- runs ----------------------------------------------------------------------------------------------------------

def run_a2c(a, cfg, out: Path, ck: Path):
    argv = ['run.py', '--map_name', a.map, '--res', str(cfg['res']), '--lr', repr(cfg['lr']), '--H', repr(cfg['H']),
            '--traj_length', str(cfg['traj_length']), '--n_train_processes', str(cfg['procs']),
            '--max_train_steps', str(a.steps), '--test_interval', str(cfg['test_interval']),
            '--save_dir', str(out) + '/']
    sys.argv = list(argv)                # run.py parses sys.argv when imported (run.py:49-50)
    run = load_module('sc2rl_run', ck / 'run.py')
    run.main()
    return argv, sorted(str(p) for p in (out / a.map / 'Logging').glob('*.txt'))


def run_impala(a, cfg, out: Path, ck: Path):
    mb = load_module('sc2rl_monobeast', ck / 'monobeast.py')
    xpid = f'{a.map}_judge_s{a.seed}'
    argv = ['--map_name', a.map, '--res', str(cfg['res']), '--num_actors', str(cfg['num_actors']),
            '--batch_size', str(cfg['batch_size']), '--num_learner_threads', str(cfg['num_learner_threads']),
            '--num_buffers', str(cfg['num_buffers']), '--unroll_length', str(cfg['unroll_length']),
            '--total_steps', str(a.steps), '--learning_rate', repr(cfg['learning_rate']),
            '--entropy_cost', repr(cfg['entropy_cost']), '--optim', cfg['optim'], '--savedir', str(out),
            '--xpid', xpid, '--disable_cuda']
    flags, unknown = mb.parser.parse_known_args(argv)
    from absl import flags as absl_flags
    absl_flags.FLAGS(['monobeast.py'] + unknown)          # as monobeast.py's __main__ does
    mb.main(flags)
    # SC2-RL's A2C log format from monobeast's logs.csv (step, mean_episode_return of training episodes)
    src = out / xpid / 'logs.csv'
    dst = out / a.map / 'Logging' / f'{xpid}.txt'
    dst.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(src) as f, open(dst, 'w') as g:
        print('#Steps,score', file=g)
        rows = csv.reader(f)
        header = [h.strip().lstrip('#').strip() for h in next(rows)]
        i_step, i_ret = header.index('step'), header.index('mean_episode_return')
        for r in rows:
            if len(r) <= max(i_step, i_ret) or r[i_ret] in ('', 'nan'): continue
            print(f'{int(float(r[i_step]))},{float(r[i_ret]):.1f}', file=g); n += 1
    return argv, [str(dst)]


def versions() -> dict:
    from importlib.metadata import version, PackageNotFoundError
    out = dict(python=platform.python_version())
    for d in ('torch', 'numpy', 'pysc2', 's2clientprotocol', 'protobuf', 'absl-py', 'jax', 'reaver_nb'):
        try: out[d] = version(d)
        except PackageNotFoundError: out[d] = None
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--checkout', required=True, type=Path, help='SC2-RL checkout at the pinned commit (checkout.sh)')
    ap.add_argument('--map', required=True, choices=R.MAPS)
    ap.add_argument('--algo', required=True, choices=('a2c', 'impala'))
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--steps', type=int, required=True, help="SC2-RL's logged steps (max_train_steps / total_steps)")
    ap.add_argument('--out', type=Path, help='output folder (default <temp folder>/sc2rl_judge/<map>_<algo>_s<seed>)')
    ap.add_argument('--env-module', default=DEFAULT_ENV, help=f'module:Class (default {DEFAULT_ENV}; {MOCK_ENV} '
                    'for a plumbing test)')
    ap.add_argument('--procs', type=int, help='A2C processes (default: the logged config; a deviation if set)')
    ap.add_argument('--test-interval', type=int, help='A2C logged steps between tests (default: the logged config)')
    ap.add_argument('--num-actors', type=int, help='IMPALA actors (default 20; a deviation if set)')
    ap.add_argument('--start-method', default='fork', choices=('fork', 'spawn', 'forkserver'),
                    help='A2C worker start method (default fork, as SC2-RL ran on Linux)')
    ap.add_argument('--torch-threads', type=int, help='torch.set_num_threads in the learner (default: unchanged)')
    ap.add_argument('--mock-episode-length', type=int, help='SC2TestEnv episode length (default: its 10)')
    ap.add_argument('--unsimulated', default='zeros', choices=('zeros', 'refuse', 'density-x4'),
                    help="feature layers the drop-in does not simulate (unit_density_aa): read as zeros (default; a "
                         "recorded deviation), refused as the drop-in does (SC2-RL then stops at its first step), or "
                         "density-x4: a probe, 4 x unit_density in its place (see density_stand_in)")
    ap.add_argument('--dry-run', action='store_true', help='print the configuration and exit')
    a = ap.parse_args(argv)

    ck = a.checkout.resolve()
    if not (ck / 'run.py').exists(): sys.exit(f'{ck}: no run.py; is this an SC2-RL checkout?')
    if not (ck / 'ConvLSTM_pytorch' / 'convlstm.py').exists():
        sys.exit(f'{ck}: the ConvLSTM_pytorch submodule is missing (AC_modules/Networks.py imports it); see checkout.sh')
    from real_curves import checkout_commit
    commit = checkout_commit(ck)
    if commit != R.PINNED_COMMIT:
        print(f'warning: checkout commit {commit} is not the pinned {R.PINNED_COMMIT}', file=sys.stderr)
    cfg = a2c_config(a.map, a.procs, a.test_interval) if a.algo == 'a2c' else impala_config(a.map, a.num_actors)
    fpls = cfg['procs'] if a.algo == 'a2c' else cfg['batch_size']
    out = (a.out or Path(tempfile.gettempdir()) / 'sc2rl_judge' / f'{a.map}_{a.algo}_s{a.seed}').resolve()
    info = dict(map=a.map, algo=a.algo, seed=a.seed, logged_steps=a.steps, frames_per_logged_step=fpls,
                frames=a.steps * fpls, env_module=a.env_module, config=cfg, checkout=str(ck),
                checkout_commit=commit, pinned_commit=R.PINNED_COMMIT, start_method=a.start_method,
                patches=PATCHES, versions=versions(), out=str(out),
                observation_deviations=({'zeros': ['feature layers the drop-in refuses (unit_density_aa: its scale '
                                                   'is not known) read as zeros'],
                                         'density-x4': ['probe: unit_density_aa read as 4 x unit_density (a stand-in '
                                                        'of the real layer\'s size, not a simulation)'],
                                         }.get(a.unsimulated, []) if a.env_module != MOCK_ENV else []))
    if cfg['deviations']: print('deviations from the logged config: ' + '; '.join(cfg['deviations']), file=sys.stderr)
    if a.dry_run:
        print(json.dumps(info, indent=1, default=repr)); return info

    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)
    if a.algo == 'impala': os.environ['OMP_NUM_THREADS'] = '1'   # monobeast.py:25 sets it before importing torch
    spec = dict(checkout=str(ck), env_module=a.env_module, algo=a.algo, unsimulated=a.unsimulated)
    os.environ[SPEC_VAR] = json.dumps(spec)
    if a.env_module == MOCK_ENV:
        os.environ['SC2RL_JUDGE_CALLS'] = str(out / 'env_calls.jsonl')
        if a.mock_episode_length: os.environ['SC2RL_JUDGE_MOCK_EPISODE_LENGTH'] = str(a.mock_episode_length)
    cls = install(spec)
    info['env_class'] = f'{cls.__module__}.{cls.__qualname__}'

    import numpy as np, torch
    import torch.multiprocessing as mp
    random.seed(a.seed); np.random.seed(a.seed); torch.manual_seed(a.seed)
    if a.torch_threads: torch.set_num_threads(a.torch_threads)
    if a.algo == 'a2c': mp.set_start_method(a.start_method, force=True)

    t0 = time.time(); info['started'] = time.strftime('%Y-%m-%d %H:%M:%S')
    status = 'failed'
    try:
        argv_passed, logs = (run_a2c if a.algo == 'a2c' else run_impala)(a, cfg, out, ck)
        info.update(argv_passed=argv_passed, logs=logs)
        status = 'ok'
    finally:
        info.update(status=status, wall_s=round(time.time() - t0, 1))
        (out / 'run_info.json').write_text(json.dumps(info, indent=1, default=repr))
        print(f'judge: {status} in {info["wall_s"]} s; {a.steps} logged steps = {a.steps * fpls} frames; '
              f'run_info: {out / "run_info.json"}; logs: {info.get("logs")}')
    return info


if __name__ == '__main__':
    main()
