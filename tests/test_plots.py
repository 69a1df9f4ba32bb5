"Learning curves, aggregate scores and saved plots of several seeds: a real 3-seed fused run, and made-up run files."
import json, sys
import numpy as np
import pytest
from conftest import reaver

pytest.importorskip('matplotlib')
from matplotlib.figure import Figure
from reaver_nb.results import (learning_curves, plot_learning_curves, aggregate_scores, plot_aggregates, save_plots,
                               stratified_bootstrap_ci)

@pytest.fixture(scope='module')
def fused_run(tmp_path_factory):
    "A tiny 3-seed A2C run on gymnax's CartPole (fused: it writes seeds.jsonl), trained and tested through the CLI."
    pytest.importorskip('gymnax')   # compiles in seconds, where a mini-game's FullyConv takes minutes on 2 CPUs
    results = tmp_path_factory.mktemp('results')
    p = reaver('train', '--env', 'gymnax:CartPole-v1', '--agent', 'a2c', '--seeds', 3, '--n-envs', 4, '--steps', 2048,
               '--run-id', 'tiny', '--results-dir', results, '--quiet', '--gin-param', 'A2C.traj_len = 8',
               '--gin-param', 'RunSettings.log_every = 8', timeout=600)
    assert p.returncode == 0, p.stderr
    p = reaver('test', '--run-id', 'tiny', '--results-dir', results, '--episodes', 2, timeout=600)
    assert p.returncode == 0, p.stderr
    return results

def test_real_fused_run(fused_run, tmp_path):
    curves = learning_curves('tiny', results_dir=fused_run)
    c = curves['gymnax:CartPole-v1', 'a2c']
    n_rows = len((fused_run / 'tiny' / 'seeds.jsonl').read_text().splitlines())
    assert c.returns.shape == (3, n_rows) and c.grid[-1] == 2048 and np.isfinite(c.returns[:, -1]).all()
    assert c.seeds == ['tiny/seed0', 'tiny/seed1', 'tiny/seed2']
    t = learning_curves('tiny', results_dir=fused_run, x='time')['gymnax:CartPole-v1', 'a2c']
    assert t.returns.shape == (3, n_rows) and (np.diff(t.grid) > 0).all()
    ev = json.loads((fused_run / 'tiny' / 'evaluation.json').read_text())
    agg = aggregate_scores('tiny', results_dir=fused_run, normalize={'gymnax:CartPole-v1': 500.}, reps=200)
    assert agg[0]['seeds'] == 3
    assert agg[0]['mean'] == pytest.approx(np.mean(ev['per_seed_mean']) / 500.)
    assert agg[0]['optimality_gap'] == pytest.approx(1 - np.mean(ev['per_seed_mean']) / 500.)
    paths = save_plots('tiny', tmp_path / 'plots', results_dir=fused_run, reps=200, dpi=50)
    assert [p.name for p in paths] == ['learning_curves_frames.png', 'learning_curves_time.png', 'aggregates.png']
    assert all(p.read_bytes()[:4] == b'\x89PNG' for p in paths)

def fake_run(root, run_id, env, agent, rows, seeds=None, test=None, config=True):
    d = root / run_id; d.mkdir(parents=True)
    if config: d.joinpath('config.gin').write_text(f"RunSettings.agent = '{agent}'\nRunSettings.env = '{env}'\n")
    d.joinpath('metrics.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    if seeds: d.joinpath('seeds.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in seeds))
    if test is not None: d.joinpath('evaluation.json').write_text(json.dumps(dict(env=env, agent=agent, **test)))
    return d

def test_resumed_and_truncated_logs(tmp_path):
    "A resumed run re-logs from its checkpoint: the newer rows win; a line cut short by a crash is skipped."
    rows = [dict(frames=f, time=f / 100, ep_return_mean=v) for f, v in [(100, 1.), (200, 2.), (300, 3.)]]
    rows += [dict(frames=200, time=2.5, ep_return_mean=20.), dict(frames=300, time=3.5, ep_return_mean=30.)]
    d = fake_run(tmp_path, 'r', 'CartPole-v1', 'ppo', rows)
    with open(d / 'metrics.jsonl', 'a') as f: f.write('{"frames": 400, "ti')
    c = learning_curves([d])['CartPole-v1', 'ppo']
    np.testing.assert_array_equal(c.grid, [100, 200, 300])
    np.testing.assert_array_equal(c.returns, [[1., 20., 30.]])
    np.testing.assert_allclose(learning_curves([d], x='time')['CartPole-v1', 'ppo'].grid[[0, -1]], [1., 3.5])

def test_grouping_grid_and_errors(tmp_path):
    a = fake_run(tmp_path, 'a', 'CartPole-v1', 'ppo', [dict(frames=f, time=f, ep_return_mean=f / 10) for f in (10, 20, 30)])
    b = fake_run(tmp_path, 'b', 'CartPole-v1', 'ppo', [dict(frames=f, time=f, ep_return_mean=None if f < 20 else f / 5)
                                                        for f in (15, 20, 25)])
    c = learning_curves(None, results_dir=tmp_path, points=5)['CartPole-v1', 'ppo']   # None: every run found
    np.testing.assert_allclose(c.grid, [10, 15, 20, 25, 30])
    np.testing.assert_allclose(c.returns[0], [1, 1.5, 2, 2.5, 3])
    assert np.isnan(c.returns[1, [0, 1, 4]]).all() and np.allclose(c.returns[1, 2:4], [4, 5])
    (tmp_path / 'untrained').mkdir(); (tmp_path / 'untrained' / 'config.gin').write_text("RunSettings.env = 'CartPole-v1'\n")
    with pytest.raises(FileNotFoundError, match='metrics.jsonl is missing'): learning_curves('untrained', tmp_path)
    with pytest.raises(ValueError, match="use 'frames'"): learning_curves([a], x='steps')
    with pytest.raises(FileNotFoundError, match='reaver test --run-id a'): aggregate_scores([a])
    fig = plot_learning_curves([a, b], x='time', reps=50)
    assert isinstance(fig, Figure) and fig.axes[0].get_xlabel() == 'wall-clock time (s)'

def test_aggregates_match_hand_computation(tmp_path):
    for k, m in enumerate([1., 2., 3., 10.]):   # four single-seed runs: IQM drops 1 and 10
        fake_run(tmp_path, f's{k}', 'jax:DefeatRoaches', 'a2c', [dict(frames=1, time=1, ep_return_mean=m)],
                 test=dict(returns=[m - 1, m + 1]))
    agg = aggregate_scores(None, results_dir=tmp_path, reps=500)
    r = agg[0]
    # rliable's median is over tasks (of each task's mean over runs): with one task, the mean
    assert (r['seeds'], r['iqm'], r['mean'], r['median']) == (4, 2.5, 4.0, 4.0)
    assert 'optimality_gap' not in r and agg.columns[-1] == 'median'
    for k in agg.metrics: assert r[k + '_ci'][0] <= r[k] <= r[k + '_ci'][1]
    ref = {'DefeatRoaches': 10.}
    g = aggregate_scores(None, results_dir=tmp_path, normalize=ref, reps=100)[0]
    assert g['optimality_gap'] == pytest.approx(1 - np.mean([0.1, 0.2, 0.3, 1.0]))
    assert '<table class="reaver-aggregates">' in agg._repr_html_() and 'IQM' in str(agg)
    assert len(plot_aggregates(agg).axes) == 3
    with pytest.raises(ValueError, match='normalize='): aggregate_scores(None, results_dir=tmp_path, normalize='best')

def test_stratified_bootstrap_is_seeded():
    s = np.random.default_rng(1).normal(size=(5, 3))
    f = lambda x: np.array([x.mean()])
    np.testing.assert_array_equal(stratified_bootstrap_ci(s, f, reps=100, seed=3), stratified_bootstrap_ci(s, f, reps=100, seed=3))

def test_missing_optional_dependencies_say_how_to_install(tmp_path, monkeypatch):
    d = fake_run(tmp_path, 'a', 'CartPole-v1', 'ppo', [dict(frames=1, time=1, ep_return_mean=1.)],
                 test=dict(returns=[1.]))
    monkeypatch.setitem(sys.modules, 'matplotlib.figure', None)   # import fails as if not installed
    from reaver_nb.extras import install_command
    with pytest.raises(ImportError, match=r"reaver_nb's \[notebook\] extra") as e: plot_learning_curves([d])
    assert install_command('notebook') in str(e.value)    # the command for where reaver_nb came from
    assert aggregate_scores([d], reps=10)[0]['seeds'] == 1     # the table needs no extra (numpy and scipy)
