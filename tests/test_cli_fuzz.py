"""Property-based fuzz of `reaver train` flags and gin values (hypothesis, seeded): whatever a user types, the CLI
answers with exit status 0 (a `--dry-run` whose settings all check out) or 2 and one error line, never a traceback,
and writes nothing."""
import contextlib, io, os, string
from pathlib import Path
import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st
from reaver_nb.cli import main

# every field a user can bind, by configurable (the CLI flags bind RunSettings')
FIELDS = {
    'RunSettings': ['env', 'agent', 'n_envs', 'total_steps', 'seed', 'vector_env', 'n_workers', 'max_restarts',
                    'log_every', 'log_seconds', 'checkpoint_every', 'checkpoint_minutes', 'keep_checkpoints', 'n_seeds',
                    'fused'],
    'HeadRestart': ['heads', 'at', 'min_return', 'every', 'agents'],
    'A2C': ['learning_rate', 'lr_schedule', 'adam_eps', 'traj_len', 'discount', 'gae_lambda', 'value_coef',
            'entropy_coef', 'head_entropy', 'entropy_decay_frames', 'entropy_final_frac', 'max_grad_norm',
            'clip_rewards', 'normalize_advantages', 'normalize_returns', 'n_epochs', 'minibatch_size'],
    'PPO': ['learning_rate', 'n_epochs', 'minibatch_size', 'clip_ratio', 'clip_value', 'traj_len'],
    'SC2Settings': ['screen_size', 'minimap_size', 'step_mul', 'screen_features', 'functions'],
    'MiniGameSettings': ['functions', 'order_queue', 'move_follows'],
    'make_model': ['spatial_init', 'value_through_trunk'],
    'GymSettings': ['atari_frame_stack', 'make_kwargs'],
}
NAMES = string.ascii_letters + string.digits + '_-./\\:~ $\x00é'

numbers = st.one_of(st.integers(-2 ** 80, 2 ** 80), st.integers(-3, 70000),
                    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, 1, -1, 2 ** 31, 2 ** 63, 10 ** 30]))
literals = st.recursive(st.one_of(numbers, st.booleans(), st.none(), st.text(NAMES, max_size=12),
                                  st.sampled_from(['queued', 'a2c', 'ppo', 'shm', 'core', 'linear', 'player_relative'])),
                        lambda inner: st.one_of(st.tuples(inner, inner), st.lists(inner, max_size=3),
                                                st.dictionaries(st.sampled_from(['a2c', 'ppo', 'x']), inner, max_size=2)),
                        max_leaves=6)

def _value_text(v) -> str:
    text = repr(v)
    return {'nan': "float('nan')", 'inf': '1e999', '-inf': '-1e999'}.get(text, text)

typed = st.builds(lambda c, i, v: f"{c}.{FIELDS[c][i % len(FIELDS[c])]} = {_value_text(v)}",
                  st.sampled_from(sorted(FIELDS)), st.integers(0, 30), literals)
bindings = st.one_of(typed, typed, typed, st.text(string.printable, max_size=40))   # mostly well-formed, some anything
sane = st.integers(1, 4096).map(str)
int_flag = st.one_of(sane, sane, sane, numbers.map(str), st.text(NAMES, max_size=6))

@st.composite
def argvs(draw):
    argv = []
    for flag in ('--n-envs', '--steps', '--seed', '--seeds'):
        if draw(st.integers(0, 3)) == 0: argv += [flag, draw(int_flag)]
    if draw(st.booleans()):
        argv += ['--env', draw(st.sampled_from(['jax:MoveToBeacon', 'jax:CollectMineralShards', 'jax:DefeatRoaches',
                                                 'CartPole-v1', 'MoveToBeacon', 'Pendulum-v1', 'bogus', '']))]
    if draw(st.booleans()): argv += ['--agent', draw(st.sampled_from(['a2c', 'ppo', 'dqn']))]
    if draw(st.booleans()):
        argv += ['--run-id', draw(st.one_of(st.text(NAMES, max_size=10),
                                            st.sampled_from(['../x', '/tmp/abs', 'a/b', '..', '.', 'ok-run_1.0'])))]
    for b in draw(st.lists(bindings, max_size=3)): argv += [f'--gin-param={b}']   # (a value may start with '-')
    return argv


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try: code = main(argv)
        except SystemExit as e: code = e.code
    return code, out.getvalue(), err.getvalue()


def files_under(root: Path) -> set:
    return {p for p in root.rglob('*')}


@pytest.fixture(scope='module')
def sandbox(tmp_path_factory):
    root = tmp_path_factory.mktemp('fuzz')
    (root / 'a_file').write_text('')
    return root


@seed(20261203)
@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(argv=argvs(), results_kind=st.sampled_from(['new', 'file', 'under_file']))
def test_train_flags_and_gin_values_never_trace_back(sandbox, argv, results_kind):
    results = {'new': sandbox / 'results', 'file': sandbox / 'a_file', 'under_file': sandbox / 'a_file' / 'r'}[results_kind]
    before = files_under(sandbox)
    cwd = os.getcwd()
    os.chdir(sandbox)                      # a run id that escaped would land here, and be seen
    try: code, out, err = run_cli(['train', '--dry-run', '--results-dir', str(results), *argv])
    finally: os.chdir(cwd)
    assert 'Traceback' not in err and 'Traceback' not in out, (argv, err)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and 'error' in err, (argv, err)
    else:
        assert 'dry run: nothing written' in out, (argv, out)
    assert files_under(sandbox) == before, (argv, files_under(sandbox) - before)


@seed(20261203)
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(run_id=st.text(NAMES, max_size=12), episodes=int_flag)
def test_test_and_import_flags_never_trace_back(sandbox, run_id, episodes):
    for argv in (['test', '--run-id', run_id, '--episodes', episodes, '--results-dir', str(sandbox / 'results')],
                 ['import', str(sandbox / 'missing.reaver.tar.gz'), '--run-id', run_id, '--results-dir',
                  str(sandbox / 'results')]):
        before = files_under(sandbox)
        code, out, err = run_cli(argv)
        assert 'Traceback' not in err and code == 2 and len(err.strip().splitlines()) == 1, (argv, err)
        assert files_under(sandbox) == before
