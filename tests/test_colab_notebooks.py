"""Every notebook in colab/ runs top to bottom in a fresh kernel, in its tiny configuration (IN_TEST=1), in an empty
working directory — as a user's Colab runtime would, minus the GPU and the downloads."""
import json, os, shutil, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / 'colab').glob('*.ipynb'))

nbclient = pytest.importorskip('nbclient')
nbformat = pytest.importorskip('nbformat')


def _errors(nb):
    return [(c['source'][:80], o.get('ename'), o.get('evalue')) for c in nb.cells if c.cell_type == 'code'
            for o in c.get('outputs', []) if o.get('output_type') == 'error']


@pytest.mark.parametrize('path', NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_colab_notebook_runs(path, tmp_path, monkeypatch):
    shutil.copy(path, tmp_path / path.name)
    monkeypatch.setenv('IN_TEST', '1')
    monkeypatch.setenv('MPLBACKEND', 'Agg')
    nb = nbformat.read(tmp_path / path.name, as_version=4)
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
