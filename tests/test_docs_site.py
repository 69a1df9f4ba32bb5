"""The docs site as a reader meets it: `python tools/docs.py` builds it (the notebooks run as nbdev-test runs them,
their outputs kept out of nbs/); the pages it built, opened in headless Chromium, have the getting-started page,
the CLI reference with every command and flag, rendered lists, and an output under every example that prints.

The browser part reads the site already built in _site/ (CI builds it before pytest; so does `python tools/docs.py`)
and skips where there is none, or no Chromium. Screenshots go to $REAVER_SCREENSHOT_DIR (default tests/artifacts)."""
import argparse, json, os, re, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / '_site'
SHOTS = Path(os.environ.get('REAVER_SCREENSHOT_DIR') or Path(__file__).resolve().parent / 'artifacts')
sys.path.insert(0, str(ROOT / 'tools'))
import docs   # tools/docs.py


def test_run_notebooks_keeps_outputs_out_of_nbs(tmp_path):
    "The docs' run of a notebook is nbdev-test's, and its outputs go to the docs' folder, not into nbs/."
    nb = ROOT / 'nbs' / '00_spec.ipynb'
    before = nb.read_bytes()
    assert docs.run_notebooks([nb], tmp_path, n_workers=0) == []
    assert nb.read_bytes() == before
    ran = json.loads((tmp_path / nb.name).read_text())
    assert any(c.get('outputs') for c in ran['cells'] if c['cell_type'] == 'code')


def test_markdown_fixes_and_folds():
    "Lists after a paragraph line get their blank line; a cell of checks is folded; a printing cell is marked."
    assert docs.fix_markdown('**Why.**\n- a\n  more\n- b\n  - nested') == '**Why.**\n\n- a\n  more\n- b\n    - nested'
    nb = {'cells': [{'cell_type': 'code', 'source': 'x = 1\nx', 'outputs': [
                        {'output_type': 'execute_result', 'data': {'text/plain': '1'}}]},
                    {'cell_type': 'code', 'source': 'test_eq(x, 1)\nassert x', 'outputs': []},
                    {'cell_type': 'code', 'source': '#| hide\nsecret = 2', 'outputs': []},
                    {'cell_type': 'code', 'source': '%%bash\nreaver --version', 'outputs': [
                        {'output_type': 'stream', 'name': 'stdout', 'text': 'reaver_nb 0.1.0\r\n'}]}]}
    md, _ = docs.notebook_markdown(nb, 'demo')
    assert md.count('data-prints') == 2 and md.count('class="nb-output"') == 2 and 'secret' not in md
    assert '<summary>Checks</summary>' in md and '```sh\nreaver --version\n```' in md


def test_every_cell_has_an_id():
    "nbformat 4.5 cells carry unique ids (without them every reader of the notebook warns MissingIDFieldWarning)."
    for nb in sorted([*(ROOT / 'nbs').glob('*.ipynb'), *(ROOT / 'colab').glob('*.ipynb')]):
        ids = [c.get('id') for c in json.loads(nb.read_text())['cells']]
        assert None not in ids and len(set(ids)) == len(ids), nb.name


def test_cli_reference_has_every_command_and_flag():
    from reaver_nb.cli import _parser
    ref = docs.cli_reference()
    subs = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, sp in subs.choices.items():
        assert f'## `reaver {name}`' in ref, name
        for a in sp._actions:
            for flag in a.option_strings: assert re.search(r'\| `[^`]*' + re.escape(flag) + r'\b', ref), (name, flag)
    assert '### `reaver sc2 install`' in ref and '`--accept-eula`' in ref


# ---------------------------------------------------------------- the built site, in a browser

def _browser_missing():
    from browser import find_chromium   # tests/browser.py
    from importlib.util import find_spec
    why = []
    if not (SITE / 'index.html').exists(): why.append('no built site in _site/ (python tools/docs.py builds it)')
    if find_chromium() is None: why.append('no chromium on PATH')
    if find_spec('playwright') is None: why.append('no playwright')
    return why

_EMPTY = """() => [...document.querySelectorAll('.nb-cell[data-prints]')].filter(c => {
  const out = c.querySelector('.nb-output');
  return !out || (!out.innerText.trim() && !out.querySelector('img, table, svg'));
}).map(c => (c.querySelector('code') || c).innerText.slice(0, 120))"""


@pytest.fixture(scope='module')
def page():
    if why := _browser_missing(): pytest.skip('; '.join(why))
    from browser import find_chromium
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=find_chromium(), headless=True,
                               args=['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'])
        p = b.new_page(viewport={'width': 1280, 'height': 1000})
        yield p
        b.close()


def _open(page, rel):
    page.goto((SITE / rel / 'index.html').as_uri() if not rel.endswith('.html') else (SITE / rel).as_uri())
    page.wait_for_load_state('load')
    return page


def test_getting_started_page(page):
    p = _open(page, 'getting-started')
    assert p.inner_text('h1').strip() == 'Getting started'
    heads = [h.strip() for h in p.locator('article h2').all_inner_texts()]
    for want in ('Install', 'A first run', 'Reading the log', 'Test', 'Compare', 'Plot', 'Colab'):
        assert any(h.startswith(want) for h in heads), (want, heads)
    text = p.inner_text('article')
    assert '| T ' in text and 'RMe' in text and 'Done: ' in text, 'the first run printed no log'
    assert 'return 500.00' in text or 'episodes of CartPole-v1' in text, 'reaver test printed nothing'
    drawn = p.evaluate("() => [...document.querySelectorAll('.nb-output img')].filter(i => i.naturalWidth > 0).length")
    assert drawn >= 1, 'the plot is not on the page'
    assert p.evaluate(_EMPTY) == []
    SHOTS.mkdir(parents=True, exist_ok=True); p.screenshot(path=str(SHOTS / 'docs_getting_started.png'))


def test_cli_reference_page(page):
    from reaver_nb.cli import _parser
    p = _open(page, 'reference/cli')
    text = p.inner_text('article')
    subs = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, sp in subs.choices.items():
        assert f'reaver {name}' in text, name
        for a in sp._actions:
            for flag in a.option_strings: assert flag in text, (name, flag)
    SHOTS.mkdir(parents=True, exist_ok=True); p.screenshot(path=str(SHOTS / 'docs_cli_reference.png'))


def test_home_renders_lists(page):
    p = _open(page, 'index.html')
    assert p.locator('article ul li').count() >= 3, 'the home page has no rendered list'
    assert '- *Reaver*' not in p.inner_text('article')


def test_no_empty_output_where_an_example_prints(page):
    "Every lesson cell that prints or ends with a value shows its output (the site was built from run notebooks)."
    empty = {}
    for html in sorted((SITE / 'lessons').glob('*/index.html')):
        p = _open(page, str(html.parent.relative_to(SITE)))
        if found := p.evaluate(_EMPTY): empty[html.parent.name] = found
    assert not empty, f'examples without their output: {empty}'
    p = _open(page, 'lessons/11_cli')
    assert p.locator('details.checks').count() >= 5, 'the CLI lesson shows its checks unfolded'
    SHOTS.mkdir(parents=True, exist_ok=True); p.screenshot(path=str(SHOTS / 'docs_lesson_cli.png'))
