"""Render README.md from nbs/index.ipynb with nbconvert's markdown exporter (nbdev-readme needs Quarto).

`python tools/readme.py` writes README.md; `python tools/readme.py --check` exits 1 if README.md is stale.
Cells whose first line is `#| hide` are left out; other `#|` directive lines are stripped.
"""
import sys
from pathlib import Path
import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parent.parent

def render() -> str:
    nb = nbformat.read(ROOT / 'nbs' / 'index.ipynb', as_version=4)
    cells = []
    for c in nb.cells:
        lines = c.source.splitlines()
        if c.cell_type == 'code':
            if any(l.strip().startswith('#| hide') for l in lines): continue
            c.source = '\n'.join(l for l in lines if not l.strip().startswith('#|')).strip('\n')
            c.outputs = []
        cells.append(c)
    nb.cells = cells
    body, _ = MarkdownExporter().from_notebook_node(nb)
    header = '<!-- Generated from nbs/index.ipynb by tools/readme.py; edit the notebook, not this file. -->\n\n'
    return header + body.strip() + '\n'

if __name__ == '__main__':
    text, path = render(), ROOT / 'README.md'
    if '--check' in sys.argv:
        if not path.exists() or path.read_text() != text:
            print('README.md is not what nbs/index.ipynb renders to: run `python tools/readme.py` and commit.')
            sys.exit(1)
        print('README.md matches nbs/index.ipynb')
    else:
        path.write_text(text); print('wrote', path)
