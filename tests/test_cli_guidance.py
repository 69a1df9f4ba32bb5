"""What the CLI tells a user, end to end (issue 53): no lab notes in a normal run, rows on a short run, "Next:" only
with commands that work here, compare's frames, checkpoint and stale-test note, plots under the run with notes
instead of warnings, errors in the CLI's own terms, and `reaver sc2` / `reaver doctor` help and exit codes."""
import json, shutil
import pytest
from conftest import reaver

CP = ['--env', 'CartPole-v1', '--agent', 'ppo']


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    "Two CartPole runs: `cp` (4,096 steps, tested) and `one` (one update, one logged row, not tested)."
    res = tmp_path_factory.mktemp('guidance') / 'results'
    r = reaver('train', *CP, '--steps', 4096, '--run-id', 'cp', '--results-dir', res)
    assert r.returncode == 0, r.stderr
    train_out = r.stdout
    r = reaver('test', 'cp', '--episodes', 4, '--results-dir', res)
    assert r.returncode == 0, r.stderr
    r = reaver('train', *CP, '--steps', 256, '--run-id', 'one', '--results-dir', res, '--quiet')
    assert r.returncode == 0, r.stderr
    return res, train_out


def test_a_short_run_logs_rows_and_suggests_what_works(runs):
    res, out = runs
    rows = [json.loads(l) for l in (res / 'cp' / 'metrics.jsonl').read_text().splitlines()]
    assert len(rows) >= 9 and rows[0]['updates'] == 1 and rows[-1]['frames'] == 4096, [r['updates'] for r in rows]
    assert sum(l.startswith('| T') for l in out.splitlines()) == len(rows)
    assert rows[1]['fps'] is not None                               # a rate from the second row on
    nxt = out.split('Next:\n')[1]
    assert 'reaver test cp' in nxt and 'reaver compare' not in nxt   # no published score for CartPole
    assert ('tensorboard --logdir' in nxt) == (shutil.which('tensorboard') is not None)
    assert 'Note:' not in out


def test_the_default_env_prints_no_lab_note_but_the_dry_run_names_it(tmp_path):
    tiny = ['--steps', 128, '--n-envs', 4, '--gin-param', 'A2C.traj_len = 8', '--gin-param', 'SC2Settings.screen_size = 8',
            '--gin-param', 'SC2Settings.minimap_size = 8', '--results-dir', tmp_path]
    r = reaver('train', *tiny, '--run-id', 'mtb')
    assert r.returncode == 0 and 'HeadRestart' not in r.stdout + r.stderr, r.stdout
    assert 'reaver compare mtb' in r.stdout.split('Next:\n')[1]      # MoveToBeacon has published scores
    r = reaver('train', *tiny, '--dry-run')
    assert r.returncode == 0 and '  note     HeadRestart.at = 350,000 is past' in r.stdout, r.stdout
    assert '  RunSettings.total_steps = 128' in r.stdout and r.stdout.count('# --gin-param') == 3


def test_compare_shows_frames_checkpoint_and_a_stale_test(runs):
    res, _ = runs
    r = reaver('compare', 'cp', '--results-dir', res)
    assert r.returncode == 0, r.stderr
    head, row = r.stdout.splitlines()[0].split(), r.stdout.splitlines()[2]
    assert head[5:8] == ['frames', 'checkpoint', 'tested'] and '4,096' in row and 'ckpt_0000004096' in row
    assert 'No published score exists for CartPole-v1' in r.stdout
    r = reaver('train', '--run-id', 'cp', '--resume', '--steps', 4352, '--results-dir', res, '--quiet')
    assert r.returncode == 0, r.stderr
    r = reaver('compare', 'cp', '--results-dir', res)
    assert "older than the run's newest checkpoint, ckpt_0000004352.msgpack" in r.stdout, r.stdout
    assert f"`reaver test {res / 'cp'}` scores the newest" in r.stdout


def test_plot_writes_under_the_run_with_notes_not_warnings(runs, tmp_path):
    res, _ = runs
    r = reaver('plot', 'one', '--results-dir', res, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (res / 'one' / 'plots').iterdir()) == \
        ['learning_curves_frames.png', 'learning_curves_time.png', 'training.png']
    assert list(tmp_path.iterdir()) == []                            # nothing in the working directory
    assert 'Note: one is not tested yet, so there is no aggregates.png' in r.stdout
    assert 'Warning' not in r.stderr and '.py:' not in r.stderr, r.stderr
    r = reaver('plot', 'cp', 'one', '--results-dir', res, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert {'aggregates.png', 'learning_curves_frames.png'} <= {p.name for p in (res / 'plots').iterdir()}
    assert 'aggregates.png leaves it out' in r.stdout
    r = reaver('plot', 'cp', '--normalize', 'reaver', '--results-dir', res, '--out', tmp_path / 'n')
    assert r.returncode == 2 and r.stderr.startswith('reaver plot: error: --normalize reaver: no Reaver score'), r.stderr
    assert 'normalize=None' not in r.stderr and not (tmp_path / 'n').exists()


def test_sc2_and_doctor_help_and_exit_codes(tmp_path):
    r = reaver('sc2')
    assert r.returncode == 2 and 'reaver sc2 install --accept-eula' in r.stderr and 'rest' not in r.stderr, r.stderr
    r = reaver('sc2', '--help')
    assert r.returncode == 0 and 'rest' not in r.stdout and 'doctor' in r.stdout
    r = reaver('sc2', 'doctor', '--help')
    assert r.returncode == 0 and r.stdout.startswith('usage: reaver sc2 doctor'), r.stdout
    r = reaver('doctor', '--sc2path', tmp_path / 'none')
    last = r.stdout.strip().splitlines()[-1]
    assert r.returncode == 1 and last.startswith('The JAX envs') and 'both are ready' in last, r.stdout
