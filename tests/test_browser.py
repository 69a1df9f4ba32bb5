"""colab/quickstart.ipynb in a real browser: a Notebook 7 server on 127.0.0.1, headless Chromium (Debian `chromium`)
driven by Playwright, Run -> Run All Cells; the live dashboard must have drawn a plot and the comparison table must
appear. A stub notebook's `reaver_nb.train` must end when the dashboard's Stop button is clicked in the page. The
screenshots are kept in $REAVER_SCREENSHOT_DIR (default tests/artifacts)."""
import os
from pathlib import Path
import pytest

from browser import NotebookFailed, missing_prerequisites, run_notebook_in_browser   # tests/browser.py

QUICKSTART = Path(__file__).resolve().parents[1] / 'colab' / 'quickstart.ipynb'
SHOTS = Path(os.environ.get('REAVER_SCREENSHOT_DIR') or Path(__file__).resolve().parent / 'artifacts')
NOTEBOOK_S = float(os.environ.get('REAVER_BROWSER_TIMEOUT', 900))   # the cells' own run time, on top of ~15 s of set-up

MISSING = missing_prerequisites()
pytestmark = pytest.mark.skipif(bool(MISSING), reason='no real browser run here: ' + '; '.join(MISSING))

def test_quickstart_in_browser(tmp_path):
    """The Colab quickstart, in the tiny configuration of tests/test_colab_notebooks.py (its settings' variables set to
    tiny values; the notebook as committed trains 600k frames, about ten minutes here), runs top to bottom in Notebook 7
    and shows its dashboard plot and comparison table."""
    if not QUICKSTART.exists(): pytest.skip(f'{QUICKSTART} does not exist yet')
    import nbformat
    from test_colab_notebooks import tiny
    nb = tmp_path / QUICKSTART.name
    nbformat.write(tiny(nbformat.read(QUICKSTART, as_version=4), 'quickstart'), nb)
    shot = SHOTS / 'quickstart.png'
    facts = run_notebook_in_browser(nb, shot, timeout=NOTEBOOK_S, env={'IN_TEST': '1'})
    assert facts['dashboards'] >= 1, f"no element with class 'reaver-dashboard' on the page (see {shot})"
    assert facts['dashboard_imgs_drawn'] >= 1, (
        f"the dashboard drew no plot: {facts['dashboard_imgs']} <img> in .reaver-dashboard, none with a data:/blob: "
        f"image the browser decoded; {facts['widgets_loading']} widget(s) still 'Loading widget...', widget errors "
        f"{facts['widget_errors']} (see {shot})")
    assert facts['compare_table'], f'no <table class="reaver-compare"> on the page (see {shot})'
    assert shot.stat().st_size > 0

STUB = {   # cell sources of a stand-in quickstart: what the harness must see, then a cell that raises
    'dashboard': """import io, ipywidgets as widgets, matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
img = widgets.Image(format='png')
dash = widgets.VBox([widgets.HTML('episode return'), img]); dash.add_class('reaver-dashboard')
display(dash)
for step in range(1, 4):   # a live plot: redrawn as training goes
    fig, ax = plt.subplots(figsize=(3, 2)); ax.plot(range(step + 1)); buf = io.BytesIO()
    fig.savefig(buf, format='png'); plt.close(fig); img.value = buf.getvalue()""",
    'table': """from IPython.display import HTML
HTML('<table class="reaver-compare"><tr><th>agent</th><th>return</th></tr><tr><td>a2c</td><td>1.0</td></tr></table>')""",
    'raises': "import os; raise ValueError(f'stub failure, IN_TEST={os.environ.get(\"IN_TEST\")}')",
}

def test_harness_sees_widgets_table_and_errors(tmp_path):
    "The harness itself, on a stand-in notebook: widget plot and table found, a raising cell fails with its traceback."
    import nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in STUB.values()])
    nb.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    nbformat.write(nb, tmp_path / 'stub.ipynb')
    shot = tmp_path / 'stub.png'
    with pytest.raises(NotebookFailed, match=r'cell 3 \(In \[3\]\): ValueError: stub failure, IN_TEST=1') as e:
        run_notebook_in_browser(tmp_path / 'stub.ipynb', shot, timeout=120, env={'IN_TEST': '1'})
    facts = e.value.facts
    assert facts['dashboard_imgs_drawn'] == 1 and facts['compare_table'], facts
    assert facts['executed'] == 3 and shot.stat().st_size > 0
    assert not list(tmp_path.glob('.ipynb_checkpoints')), 'the original notebook directory was written to'

STOP_NB = {   # 5M steps take far longer than the test allows: only the dashboard's Stop button can end the run in time
    'train': """import reaver_nb
out = reaver_nb.train('CartPole-v1', 'ppo', steps=5_000_000, n_envs=4, results_dir='results', run_id='stop_me',
                      gin_params=['PPO.minibatch_size = 32', 'RunSettings.log_seconds = 1'])
print('RESULT', out['stopped'], out['frames'])""",
    'checkpoint': """from pathlib import Path
ckpts = sorted(Path('results/stop_me/checkpoints').glob('*'))
assert ckpts, 'no checkpoint in results/stop_me/checkpoints'
print('CHECKPOINT', ckpts[-1].name)""",
}
FIRST_ROW_S = 100   # kernel start, imports, env and agent set-up and the first jit compile on a loaded 2-core box
CLICK_S = 30        # a row comes at least every second (log_seconds = 1): the kernel should react well within this

_DASH_JS = """() => {
  const d = document.querySelector('.reaver-dashboard');
  if (!d) return null;
  const pre = d.querySelector('pre'), status = d.querySelector('.widget-hbox .widget-html-content');
  const buttons = [...d.querySelectorAll('button')];
  return {log: pre ? pre.innerText : '', status: status ? status.innerText : '',
          buttons: buttons.map(b => b.innerText.trim()), tooltips: buttons.map(b => b.title)};
}"""

def _click_stop(page):
    "Wait for the dashboard's first log row, click Stop, and wait until the kernel shows it saw the click."
    import re, time
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    t0 = time.monotonic()
    try:   # the log <pre> is only written by on_row: a row has been shown
        page.wait_for_function("() => { const p = document.querySelector('.reaver-dashboard pre');"
                               "return !!p && p.innerText.includes('| ') }", timeout=FIRST_ROW_S * 1000)
    except PlaywrightTimeout:
        raise AssertionError(f'the dashboard showed no log row within {FIRST_ROW_S} s: {page.evaluate(_DASH_JS)}') from None
    first_row_s, before = round(time.monotonic() - t0, 1), page.evaluate(_DASH_JS)
    # by its text: the button's accessible name also holds the stop icon's glyph (CSS ::before content)
    page.locator('.reaver-dashboard button').filter(has_text=re.compile(r'^\s*Stop\s*$')).click()
    t1 = time.monotonic()
    try:   # the description changes ('Stopping…', then 'Stopped') only when the kernel ran the click handler
        page.wait_for_function("() => [...document.querySelectorAll('.reaver-dashboard button')]"
                               ".some(b => b.innerText.trim() !== 'Stop')", timeout=CLICK_S * 1000)
    except PlaywrightTimeout:
        after = page.evaluate(_DASH_JS)
        raise AssertionError(
            f'the kernel did not process the click on Stop within {CLICK_S} s while the training cell ran: the button '
            f'still reads {after["buttons"]}; last log row before the click {before["log"].splitlines()[-1:]}, '
            f'{CLICK_S} s later {after["log"].splitlines()[-1:]} (status: {after["status"]!r}; button tooltip: '
            f'{after["tooltips"]})') from None
    return {'first_row_s': first_row_s, 'click_seen_s': round(time.monotonic() - t1, 1),
            'status_at_click': before['status'], 'buttons_after_click': page.evaluate(_DASH_JS)['buttons']}

def test_stop_button_stops_training_in_browser(tmp_path):
    "A click on the dashboard's Stop button in a real browser ends a running `train` with a checkpoint and stopped=True."
    import re, nbformat
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in STOP_NB.values()])
    nb.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    nbformat.write(nb, tmp_path / 'stop_button.ipynb')
    shot = SHOTS / 'stop_button.png'
    facts = run_notebook_in_browser(tmp_path / 'stop_button.ipynb', shot, timeout=FIRST_ROW_S + CLICK_S + 30,
                                    during=_click_stop)
    train_out, ckpt_out = facts['stdout']
    m = re.search(r'RESULT (\w+) (\d+)', train_out)
    assert m, f'the training cell printed no RESULT line; its stdout: {train_out!r} (see {shot})'
    assert m[1] == 'True', f"train returned stopped={m[1]} after the click on Stop (see {shot})"
    assert int(m[2]) < 5_000_000, f'the run went to the end ({m[2]} frames): the click did not stop it (see {shot})'
    assert 'CHECKPOINT' in ckpt_out, f'the checkpoint cell printed {ckpt_out!r} (see {shot})'
    assert facts['dashboard_buttons'] == ['Stopped'], (
        f"the dashboard's button reads {facts['dashboard_buttons']} after the run, not ['Stopped'] (see {shot})")
    assert shot.stat().st_size > 0
