"""Every notebook in colab/ runs top to bottom in a fresh kernel, in an empty working directory — as a user's Colab
runtime would, minus the GPU. The tiny configuration is this test's, not the notebooks': it sets their settings'
variables to tiny values and makes the runs the reproduce notebook loads, so that a reader sees only the real
settings. The StarCraft II notebook downloads the game from a local HTTPS mirror of Blizzard's CDN (a zip laid out
like Blizzard's, password and all, whose game binary is the stand-in that speaks the game's protocol,
`tools/sc2_standin`), with Colab's tcmalloc in LD_PRELOAD, and trains on it through pysc2."""
import json, os, re, shutil, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / 'colab').glob('*.ipynb'))

nbclient = pytest.importorskip('nbclient')
nbformat = pytest.importorskip('nbformat')


def _errors(nb):
    return [(c['source'][:80], o.get('ename'), o.get('evalue')) for c in nb.cells if c.cell_type == 'code'
            for o in c.get('outputs', []) if o.get('output_type') == 'error']


TINY_PARAMS = ['A2C.traj_len = 8', 'PPO.traj_len = 8', 'PPO.minibatch_size = 16', 'SC2Settings.screen_size = 8',
               'SC2Settings.minimap_size = 8', 'RunSettings.log_every = 8']
MADE = """from reaver_nb.archive import export_run
tiny_archives = []
for env, seeds in (('jax:MoveToBeacon', 2), ('jax:CollectMineralShards', 1)):
    rid = env.split(':')[1] + '_tiny'
    reaver_nb.train(env, 'a2c', steps=256, n_envs=4, seeds=seeds, run_id=rid, results_dir='made', verbose=False,
                    gin_params=['A2C.traj_len = 8', 'SC2Settings.screen_size = 8', 'SC2Settings.minimap_size = 8',
                                'RunSettings.log_every = 2'], dashboard=False, progress=False)
    reaver_nb.test(rid, episodes=2, results_dir='made', render=True, verbose=False)
    tiny_archives.append(str(export_run(rid, results_dir='made')))"""
# per notebook: the settings' tiny values (the first `NAME = ...` line of a code cell is replaced), cells skipped
# (the game's download and the doctor), and code run before a cell
TINY = {
    'quickstart': dict(values=dict(STEPS='2_048', TEST_EPISODES='4', N_ENVS='4', PARAMS=repr(TINY_PARAMS))),
    'starcraft2': dict(values=dict(ACCEPT_EULA='True', STEPS='256', N_ENVS='2', TEST_EPISODES='2',
                                   PARAMS=repr(['A2C.traj_len = 16']))),   # the download's mirror: sc2_mirror below
    'reproduce': dict(values=dict(ARCHIVES='tiny_archives', REPS='200'), before={'c004': MADE}),
}


COLAB_TCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'   # what Colab preloads into every process


def sc2_mirror(tmp_path, monkeypatch) -> str:
    """Serve the game and the maps from a local HTTPS mirror, the install going to a fresh SC2PATH, with Colab's
    LD_PRELOAD; returns the code that points the installer at the mirror (run before the notebook's install cell)."""
    sys.path.insert(0, str(ROOT / 'tools'))
    import sc2_standin
    mirror = sc2_standin.Mirror(tmp_path / 'mirror')
    monkeypatch.setenv('SSL_CERT_FILE', str(mirror.cafile))   # the kernel trusts the mirror's certificate
    monkeypatch.setenv('SC2PATH', str(tmp_path / 'StarCraftII'))
    monkeypatch.setenv('LD_PRELOAD', COLAB_TCMALLOC)
    game = '/Linux/SC2.4.10.zip'
    return (f"from reaver_nb.sc2 import installer as _installer   # the test's: Blizzard's CDN on a local mirror\n"
            f"_installer.VERSIONS['4.10'] = _installer.Build('{mirror.url}{game}', sha256='{mirror.sha256(game)}')\n"
            f"_installer.MINI_GAMES_URL = '{mirror.url}/mini_games.zip'")


def tiny(nb, stem):
    "The notebook in this test's tiny configuration."
    t = TINY.get(stem, {})
    cells, done = [], set()
    for c in nb.cells:
        if c.cell_type == 'code':
            if c.get('id') in t.get('skip', ()): c.source = 'print("(skipped by the test: no game download here)")'
            for name, value in t.get('values', {}).items():
                if name in done: continue
                new = re.sub(rf'^{name} = .*$', f'{name} = {value}', c.source, count=1, flags=re.M)
                if new != c.source: c.source = new; done.add(name)
            if c.get('id') in t.get('before', {}):
                cells.append(nbformat.v4.new_code_cell(t['before'][c['id']]))
        cells.append(c)
    assert done == set(t.get('values', {})), f"{stem}: settings not found: {set(t.get('values', {})) - done}"
    nb.cells = cells
    return nb


@pytest.mark.parametrize('path', NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_colab_notebook_runs(path, tmp_path, monkeypatch):
    shutil.copy(path, tmp_path / path.name)
    monkeypatch.setenv('MPLBACKEND', 'Agg')
    if path.stem == 'starcraft2': monkeypatch.setitem(TINY['starcraft2'], 'before', {'c004': sc2_mirror(tmp_path, monkeypatch)})
    nb = tiny(nbformat.read(tmp_path / path.name, as_version=4), path.stem)
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name='python3',
                                     resources={'metadata': {'path': str(tmp_path)}})
    try: client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{path.name} failed in its tiny configuration:\n{str(e)[-3000:]}")
    assert not _errors(nb)
    outputs = [o for c in nb.cells if c.cell_type == 'code' for o in c.get('outputs', [])]
    html = [o['data']['text/html'] for o in outputs if 'text/html' in o.get('data', {})]
    if path.stem in ('quickstart', 'starcraft2', 'reproduce'):
        assert any('reaver-compare' in h for h in html), f"{path.name} shows no comparison table"
    if path.stem == 'starcraft2':   # installed from the mirror, the doctor's checks all passed, trained on the game
        text = ''.join(o.get('text', '') for o in outputs)
        assert (tmp_path / 'StarCraftII' / 'Versions' / 'Base75689' / 'SC2_x64').is_file()
        assert 'ready to run StarCraft II' in text and '✓ launch' in text, text[-3000:]
        assert list(tmp_path.glob('results/MoveToBeacon_a2c_*/evaluation.json'))
    if path.stem == 'quickstart':
        widgets = [o for o in outputs if 'application/vnd.jupyter.widget-view+json' in o.get('data', {})]
        assert widgets, "quickstart shows no dashboard"
        assert list(tmp_path.glob('results/*/plots/training.png')), "the dashboard saved no PNG"
        assert any('image/gif' in o.get('data', {}) for o in outputs), "no inline video"


def test_colab_notebooks_are_clean():
    "Committed without outputs, with the Open-in-Colab badge pointing at themselves."
    assert {p.stem for p in NOTEBOOKS} >= {'quickstart', 'starcraft2', 'reproduce'}
    for p in NOTEBOOKS:
        nb = json.loads(p.read_text())
        assert all(not c.get('outputs') for c in nb['cells'] if c['cell_type'] == 'code'), f"{p.name} has outputs"
        first = ''.join(nb['cells'][0]['source'])
        assert f'colab.research.google.com/github/reaver-nb/reaver_nb/blob/main/colab/{p.name}' in first, p.name
