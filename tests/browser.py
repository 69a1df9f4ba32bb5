"""Run a notebook the way a user does: a Jupyter Notebook 7 server on 127.0.0.1, the notebook opened in headless
Chromium (Debian `chromium`, driven by Playwright), Run -> Run All Cells, then read what the page shows.

Used by tests/test_browser.py; also a script: `python tests/browser.py NOTEBOOK [SCREENSHOT] [-e IN_TEST=1]`."""
import contextlib, json, os, re, secrets, shutil, signal, socket, subprocess, sys, tempfile, time
import urllib.request
from importlib.util import find_spec
from pathlib import Path

SERVER_START_S = 60    # a cold Notebook 7 server imports a lot; on a loaded 2-core box this takes 10-30 s
PAGE_READY_S = 90      # page load, front-end extensions and the kernel's first 'idle'
SETTLE_S = 15          # widget views render after the kernel is idle; give them this long to appear

# User settings for this run only (a fresh settings dir): no autosave, and every cell kept in the DOM
# (windowed notebooks drop off-screen cells, which would hide outputs from the checks and the screenshot).
SETTINGS = {
    '@jupyterlab/docmanager-extension/plugin.jupyterlab-settings': {'autosave': False},
    '@jupyterlab/notebook-extension/tracker.jupyterlab-settings': {'windowingMode': 'none'},
}

class NotebookFailed(AssertionError):
    "A cell raised, or the run timed out; `facts` holds what the page showed."
    def __init__(self, msg, facts=None):
        super().__init__(msg)
        self.facts = facts or {}

def find_chromium():
    "Path of the system Chromium (Debian `chromium`), or None."
    for name in ('chromium', 'chromium-browser'):
        if path := shutil.which(name): return path
    return None

def missing_prerequisites():
    "Why a browser run cannot happen here (empty list when it can)."
    why = []
    if find_chromium() is None: why.append('no `chromium` on PATH (Debian: apt-get install chromium)')
    if find_spec('playwright') is None: why.append('Python package `playwright` is not installed (pip install playwright)')
    for mod, pkg in (('notebook', 'notebook>=7'), ('ipykernel', 'ipykernel'), ('ipywidgets', 'ipywidgets>=8')):
        if find_spec(mod) is None: why.append(f'Python package `{mod}` is not installed (pip install "{pkg}")')
    if find_spec('notebook') is not None:
        from importlib.metadata import version
        if int(version('notebook').split('.')[0]) < 7:
            why.append(f'notebook {version("notebook")} is installed; the browser run drives Notebook 7 (pip install "notebook>=7")')
    return why

def free_port():
    "A TCP port on 127.0.0.1 that nothing listens on right now."
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

_no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # 127.0.0.1 must never go through a proxy

def _api(base, token, path, method='GET', timeout=5):
    req = urllib.request.Request(f'{base}{path}', method=method, headers={'Authorization': f'token {token}'})
    with _no_proxy.open(req, timeout=timeout) as r: return json.loads(r.read() or b'null')

def _tail(path, n=4000):
    with contextlib.suppress(OSError): return Path(path).read_text(errors='replace')[-n:]
    return ''

@contextlib.contextmanager
def notebook_server(root_dir, env=None, settings_dir=None, log_path=None):
    "A Notebook 7 server on 127.0.0.1 (free port, random token) serving `root_dir`; yields (base_url, token, proc)."
    import psutil
    port, token = free_port(), secrets.token_hex(24)
    runtime = tempfile.mkdtemp(prefix='reaver-jupyter-runtime-')   # connection files, not the user's dir
    # The user's own Jupyter config (a password, disabled extensions) must not change the run: an empty config dir.
    full_env = {**os.environ, **(env or {}), 'JUPYTER_RUNTIME_DIR': runtime, 'JUPYTER_CONFIG_DIR': runtime,
                'PYTHONUNBUFFERED': '1'}
    if settings_dir:   # read by both the notebook and the jupyterlab server extensions (the front end asks the latter)
        full_env.update(JUPYTERLAB_SETTINGS_DIR=str(settings_dir),
                        JUPYTERLAB_WORKSPACES_DIR=str(Path(settings_dir) / 'workspaces'))
    cmd = [sys.executable, '-m', 'notebook', '--no-browser', '--ServerApp.ip=127.0.0.1', f'--ServerApp.port={port}',
           '--ServerApp.port_retries=0', f'--IdentityProvider.token={token}', f'--ServerApp.root_dir={root_dir}',
           '--JupyterNotebookApp.expose_app_in_browser=True', '--NotebookNotary.db_file=:memory:',
           '--ServerApp.shutdown_no_activity_timeout=0', '--ServerApp.log_level=INFO']
    if os.geteuid() == 0: cmd.append('--allow-root')   # containers and CI often run as root
    log_path = log_path or Path(runtime) / 'server.log'
    base = f'http://127.0.0.1:{port}'
    with open(log_path, 'wb') as log:
        proc = subprocess.Popen(cmd, cwd=root_dir, env=full_env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    family = []   # the server and the kernels it started: all must be gone afterwards
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f'the Jupyter server exited with code {proc.returncode} before answering; '
                                   f'its log ({log_path}) ends:\n{_tail(log_path)}')
            with contextlib.suppress(OSError, ValueError):
                _api(base, token, '/api/status')
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f'the Jupyter server did not answer on {base} within {SERVER_START_S} s; '
                                   f'its log ({log_path}) ends:\n{_tail(log_path)}')
            time.sleep(0.3)
        yield base, token, proc
    finally:
        with contextlib.suppress(psutil.Error):
            family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        # The polite way first: /api/shutdown stops the kernels too; then SIGTERM, then SIGKILL what is left.
        with contextlib.suppress(OSError, ValueError):
            if proc.poll() is None: _api(base, token, '/api/shutdown', method='POST')
        with contextlib.suppress(subprocess.TimeoutExpired): proc.wait(15)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired): proc.wait(10)
        for p in family:
            with contextlib.suppress(psutil.Error): p.kill()
        psutil.wait_procs(family, timeout=10)
        with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(runtime, ignore_errors=True)

# Everything read from the page goes through this one function: the notebook model (via window.jupyterapp, which
# --expose_app_in_browser provides) for execution counts and outputs, the DOM for what is actually drawn.
_STATE_JS = r"""() => {
  const app = window.jupyterapp, panel = app && app.shell && app.shell.currentWidget;
  const nb = panel && panel.content, ctx = panel && panel.sessionContext;
  const kernel = ctx && ctx.session && ctx.session.kernel;
  const cells = [];
  if (nb && nb.widgets) nb.widgets.forEach((w, i) => {
    const m = w.model;
    if (m.type !== 'code') return;
    const prompt = (w.node.querySelector('.jp-InputPrompt') || {}).textContent || '';
    const outputs = m.outputs ? m.outputs.toJSON() : [];
    const joined = t => Array.isArray(t) ? t.join('') : (t || '');
    cells.push({index: i + 1, count: m.executionCount, empty: !m.sharedModel.getSource().trim(),
                stdout: outputs.filter(o => o.output_type === 'stream' && o.name === 'stdout').map(o => joined(o.text)).join(''),
                running: prompt.includes('*'), errors: outputs.filter(o => o.output_type === 'error')
                  .map(o => `${o.ename}: ${o.evalue}\n${(o.traceback || []).join('\n')}`)});
  });
  const text = sel => [...document.querySelectorAll(sel)].map(e => e.innerText.trim()).filter(Boolean);
  const imgs = [...document.querySelectorAll('.reaver-dashboard img')];
  const table = document.querySelector('table.reaver-compare');
  return {
    ready: !!(nb && kernel), kernel: kernel ? kernel.status : (ctx ? 'no kernel' : 'no notebook'),
    kernel_name: kernel ? kernel.name : null, cells,
    stderr: text('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'),
    dialogs: text('.jp-Dialog'),
    widgets_loading: text('.jp-OutputArea-output').filter(t => /^Loading widget/.test(t)).length,
    widget_errors: text('.jp-OutputArea-output').filter(t => /Error displaying widget|Failed to load model class/.test(t)),
    dashboards: document.querySelectorAll('.reaver-dashboard').length,
    dashboard_buttons: text('.reaver-dashboard button'),
    dashboard_imgs: imgs.length,
    dashboard_imgs_drawn: imgs.filter(i => /^(data|blob):/.test(i.src) && i.complete && i.naturalWidth > 0).length,
    dashboard_img_sizes: imgs.map(i => [i.naturalWidth, i.naturalHeight]),
    compare_table: !!table, compare_table_rows: table ? table.querySelectorAll('tr').length : 0,
    scroll_height: Math.max(...[...document.querySelectorAll('.jp-WindowedPanel-outer, .jp-NotebookPanel, #main-panel')]
                              .map(e => e.scrollHeight), document.body.scrollHeight),
  };
}"""

def _strip_ansi(s): return re.sub(r'\x1b\[[0-9;]*[A-Za-z]', '', s)

def _finished(st):
    "The run is over: kernel idle, nothing queued, and every non-empty code cell ran (or one raised, so the rest were skipped)."
    if st['kernel'] != 'idle' or any(c['running'] for c in st['cells']): return False
    return any(c['errors'] for c in st['cells']) or all(c['count'] is not None for c in st['cells'] if not c['empty'])

def _screenshot(page, path):
    "The whole notebook in one image: grow the viewport to the notebook's height (Notebook 7 scrolls an inner panel)."
    for _ in range(3):   # outputs can reflow at the new size: measure again until everything fits
        height = max(900, min(int(page.evaluate(_STATE_JS)['scroll_height']) + 200, 16000))
        if height <= page.viewport_size['height']: break
        page.set_viewport_size({'width': 1280, 'height': height})
        page.wait_for_timeout(500)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)

def _run_all(page):
    "Run -> Run All Cells from the menu bar, as a user would; the command itself if the menu is not found. Returns how."
    try:
        page.get_by_role('menuitem', name='Run', exact=True).click(timeout=10_000)
        page.get_by_role('menuitem', name=re.compile(r'^Run All Cells')).click(timeout=10_000)
        return 'menu'
    except Exception:   # the menu layout changed: still run the notebook, and say so in the facts
        page.keyboard.press('Escape')
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        return 'command'

def run_notebook_in_browser(nb_path, screenshot_path, timeout=600, env=None, chromium=None, log=print, during=None):
    """Run every cell of `nb_path` in Notebook 7 in headless Chromium; save a screenshot; return what the page shows.

    The notebook is copied alone into a temporary directory which is the server's root (and the kernel's cwd), so the
    original is never saved over and anything the run writes goes away. `env` is added to the server's (and so the
    kernel's) environment. `during(page)`, if given, is called once right after Run All, while the cells run (to click
    a widget, say); what it returns is kept as facts['during'], and it counts against `timeout`. Raises NotebookFailed,
    with the error outputs in its message, if a cell raises or the cells do not finish within `timeout` seconds (an
    exception from `during` propagates as it is); the screenshot is taken in every case the page got that far."""
    from playwright.sync_api import sync_playwright
    nb_path, screenshot_path = Path(nb_path).resolve(), Path(screenshot_path).resolve()
    if not nb_path.exists(): raise FileNotFoundError(f'no notebook at {nb_path}')
    chromium = chromium or find_chromium()
    if not chromium: raise FileNotFoundError('no `chromium` on PATH; install it (Debian: apt-get install chromium)')
    t0 = time.monotonic()
    facts = {'notebook': str(nb_path), 'screenshot': None}
    with tempfile.TemporaryDirectory(prefix='reaver-browser-') as tmp:
        tmp = Path(tmp)
        work, settings = tmp / 'work', tmp / 'settings'
        work.mkdir()
        shutil.copy2(nb_path, work / nb_path.name)
        for name, value in SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(value))
        server_log = tmp / 'server.log'
        with notebook_server(work, env, settings, server_log) as (base, token, _), sync_playwright() as pw:
            facts['server_s'] = round(time.monotonic() - t0, 1)
            browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                         args=['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'])
            page = None
            try:
                page = browser.new_page(viewport={'width': 1280, 'height': 900})
                console = []
                page.on('console', lambda m: m.type == 'error' and console.append(m.text))
                page.on('pageerror', lambda e: console.append(str(e)))
                page.goto(f'{base}/notebooks/{nb_path.name}?token={token}', wait_until='domcontentloaded')
                log(f'[browser] Notebook 7 at {base}, waiting for the kernel')
                deadline = time.monotonic() + PAGE_READY_S
                while True:
                    st = page.evaluate(_STATE_JS)
                    if st['ready'] and st['kernel'] == 'idle': break
                    if st['dialogs']:   # e.g. "Select Kernel" when the notebook names no kernel: take the default
                        page.locator('.jp-Dialog .jp-mod-accept').first.click()
                    if time.monotonic() > deadline:
                        raise NotebookFailed(f'the notebook page or its kernel was not ready within {PAGE_READY_S} s '
                                             f'(kernel: {st["kernel"]}, dialogs: {st["dialogs"]}, browser errors: '
                                             f'{console[-5:]}); server log ends:\n{_tail(server_log)}', st)
                    page.wait_for_timeout(300)
                facts['ready_s'] = round(time.monotonic() - t0, 1)
                # Saved outputs would pass the checks without this run: clear them (and their execution counts) first.
                page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
                facts['run_via'] = _run_all(page)
                log(f'[browser] running all cells (via {facts["run_via"]})')
                deadline, done_polls = time.monotonic() + timeout, 0
                if during is not None:
                    facts['during'] = during(page)
                    facts['during_s'] = round(time.monotonic() - t0 - facts['ready_s'], 1)
                while True:
                    page.wait_for_timeout(500)
                    st = page.evaluate(_STATE_JS)
                    done_polls = done_polls + 1 if _finished(st) else 0
                    if done_polls >= 3: break   # idle for 1.5 s: not a gap between two cells
                    if time.monotonic() > deadline:
                        left = [c['index'] for c in st['cells'] if c['running'] or (c['count'] is None and not c['empty'])]
                        _screenshot(page, screenshot_path); facts['screenshot'] = str(screenshot_path)
                        raise NotebookFailed(f'{nb_path.name}: cells {left} (counting from 1) had not finished after {timeout} s (kernel '
                                             f'{st["kernel"]}); stderr so far:\n' + '\n'.join(st['stderr'])[-3000:],
                                             {**facts, **st})
                facts['cells_s'] = round(time.monotonic() - t0 - facts['ready_s'], 1)
                # Widget views draw after the kernel goes idle: wait until the drawn state stops changing.
                settle_end, last, same = time.monotonic() + SETTLE_S, None, 0
                while time.monotonic() < settle_end:
                    key = (st['dashboard_imgs_drawn'], st['compare_table'], st['widgets_loading'], st['scroll_height'])
                    same = same + 1 if key == last else 0
                    if same >= 2 and not st['widgets_loading']: break
                    last = key
                    page.wait_for_timeout(500)
                    st = page.evaluate(_STATE_JS)
                _screenshot(page, screenshot_path)
                facts['screenshot'] = str(screenshot_path)
                st = page.evaluate(_STATE_JS)
                errors = [f'cell {c["index"]} (In [{c["count"]}]): {_strip_ansi(e)}' for c in st['cells'] for e in c['errors']]
                facts.update({k: v for k, v in st.items() if k not in ('ready', 'dialogs', 'scroll_height')},
                             errors=errors, browser_errors=console, code_cells=len(st['cells']),
                             executed=sum(c['count'] is not None for c in st['cells']),
                             stdout=[c['stdout'] for c in st['cells']])
                del facts['cells']
                # A widget model the front end cannot load (e.g. an ipywidgets 7 kernel under Notebook 7's widget
                # manager 3) leaves an empty output and says why only in the browser console.
                facts['widget_errors'] += sorted({e.splitlines()[0] for e in console if 'jupyter-widgets' in e})
                if errors:   # error outputs render as stderr too: show only the stderr that is not a traceback
                    other = [t for t in st['stderr'] if not any(t.strip() in e for e in errors)]
                    raise NotebookFailed(f'{nb_path.name} raised:\n' + '\n\n'.join(errors)[-6000:]
                                         + ('\nother stderr output:\n' + '\n'.join(other)[-2000:] if other else ''), facts)
            except Exception:
                if page is not None and not facts['screenshot']:
                    with contextlib.suppress(Exception):
                        _screenshot(page, screenshot_path); facts['screenshot'] = str(screenshot_path)
                raise
            finally:
                browser.close()
    facts['total_s'] = round(time.monotonic() - t0, 1)
    log(f'[browser] done in {facts["total_s"]} s; screenshot {screenshot_path}')
    return facts

if __name__ == '__main__':
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('notebook'); ap.add_argument('screenshot', nargs='?', default='notebook.png')
    ap.add_argument('--timeout', type=float, default=600)
    ap.add_argument('-e', '--env', action='append', default=[], metavar='KEY=VALUE', help='e.g. -e IN_TEST=1')
    a = ap.parse_args()
    if why := missing_prerequisites(): sys.exit('cannot run a browser here: ' + '; '.join(why))
    try: out = run_notebook_in_browser(a.notebook, a.screenshot, a.timeout, dict(kv.split('=', 1) for kv in a.env))
    except NotebookFailed as e: print(json.dumps(e.facts, indent=1, default=str)); sys.exit(str(e))
    print(json.dumps(out, indent=1))
