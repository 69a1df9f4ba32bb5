"""Build the documentation site from the notebooks: the lessons (every notebook in nbs/, with the outputs that a
`nbdev-test --save` run left in them, if any), an API reference per module (names, signatures and docstrings read
from the generated modules' source, nothing imported), and the experiment record (docs/experiments.md) as one page.

    python tools/docs.py                 # writes _docs/ (markdown + mkdocs.yml) and builds the site into _site/
    python tools/docs.py --no-build      # only the markdown

nbdev's own docs build (`nbdev-docs`) needs Quarto, a binary that no package registry this project can reach ships
(PyPI's quarto-cli downloads it from GitHub while it installs), so the site is built with MkDocs from the same
notebooks. CI runs this after the notebooks ran (`.ci/run`).
"""
import ast, re, shutil, subprocess, sys
from pathlib import Path
import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parent.parent
OUT, SITE = ROOT / '_docs', ROOT / '_site'
PAGES = OUT / 'docs'
REPO = 'https://github.com/reaver-nb/reaver_nb'


def notebook_markdown(path: Path) -> tuple[str, dict]:
    "A notebook as markdown (cells marked `#| hide` left out, other `#|` lines stripped) and its output images."
    nb = nbformat.read(path, as_version=4)
    cells = []
    for c in nb.cells:
        c.metadata = {}   # nbdev-test --save records timings there in a form nbformat's schema refuses
        lines = c.source.splitlines()
        if c.cell_type == 'code':
            if any(l.strip().startswith('#| hide') for l in lines): continue
            c.source = '\n'.join(l for l in lines if not l.strip().startswith('#|')).strip('\n')
            if not c.source: continue
        cells.append(c)
    nb.cells = cells
    body, resources = MarkdownExporter().from_notebook_node(nb, resources={'output_files_dir': f'{path.stem}_files'})
    return body, resources.get('outputs', {})


def title(markdown: str, default: str) -> str:
    m = re.search(r'^# (.+)$', markdown, re.M)
    return m.group(1).strip().replace('`', '') if m else default


def api_page(module: Path) -> tuple[str, str] | None:
    "(module name, markdown) of a module's public names with their signatures and docstrings, from its source."
    src = module.read_text()
    tree = ast.parse(src)
    name = '.'.join(module.relative_to(ROOT).with_suffix('').parts).removesuffix('.__init__')
    public = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == '__all__' for t in node.targets):
            try: public = list(ast.literal_eval(node.value))
            except ValueError: pass
    nb = re.search(r'File to edit: (\.\./)+(nbs/[\w.\-]+\.ipynb)', src)
    out = [f'# `{name}`', '']
    doc = ast.get_docstring(tree)
    if doc: out += [doc, '']
    if nb: out += [f'Source: [`{nb.group(2)}`]({REPO}/blob/main/{nb.group(2)}) (the notebook is the source; this module '
                   'is generated from it).', '']
    elif module.suffix == '.py': out += [f'Source: [`{module.relative_to(ROOT)}`]({REPO}/blob/main/{module.relative_to(ROOT)}).', '']
    shown = 0
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): continue
        if node.name.startswith('_') or (public is not None and node.name not in public): continue
        if isinstance(node, ast.ClassDef):
            bases = ', '.join(ast.unparse(b) for b in node.bases)
            sig = f'class {node.name}' + (f'({bases})' if bases else '')
        else: sig = f'def {node.name}({ast.unparse(node.args)})' + (f' -> {ast.unparse(node.returns)}' if node.returns else '')
        out += [f'## `{node.name}`', '', '```python', sig, '```', '', ast.get_docstring(node) or '', '']
        if isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith('_') and ast.get_docstring(m):
                    out += [f'- `{node.name}.{m.name}({ast.unparse(m.args)})`: {ast.get_docstring(m).splitlines()[0]}']
            out += ['']
        shown += 1
    consts = [n for n in (public or []) if not re.search(rf'^(def|class|async def) {re.escape(n)}\b', src, re.M)]
    if consts: out += ['## Other public names', '', ', '.join(f'`{c}`' for c in consts), '']
    return (name, '\n'.join(out)) if shown or consts else None


def build_markdown() -> list:
    "Write _docs/ and return mkdocs' nav."
    shutil.rmtree(OUT, ignore_errors=True)
    for d in ('lessons', 'api', 'lab'): (PAGES / d).mkdir(parents=True)
    nav, lessons = [], []
    home, files = notebook_markdown(ROOT / 'nbs' / 'index.ipynb')
    (PAGES / 'index.md').write_text(home)
    for f, data in files.items(): (PAGES / f).parent.mkdir(parents=True, exist_ok=True); (PAGES / f).write_bytes(data)
    nav.append({'Home': 'index.md'})
    for nb in sorted((ROOT / 'nbs').glob('*.ipynb')):
        if nb.name == 'index.ipynb': continue
        md, files = notebook_markdown(nb)
        (PAGES / 'lessons' / f'{nb.stem}.md').write_text(md)
        for f, data in files.items():
            (PAGES / 'lessons' / f).parent.mkdir(parents=True, exist_ok=True); (PAGES / 'lessons' / f).write_bytes(data)
        lessons.append({f'{nb.stem.split("_")[0]} {title(md, nb.stem)}': f'lessons/{nb.stem}.md'})
    nav.append({'Lessons': lessons})
    api = []
    for module in sorted((ROOT / 'reaver_nb').rglob('*.py')):
        if module.name == '_modidx.py': continue
        page = api_page(module)
        if page is None: continue
        name, md = page
        (PAGES / 'api' / f'{name}.md').write_text(md)
        api.append({name: f'api/{name}.md'})
    nav.append({'API reference': api})
    shutil.copy(ROOT / 'docs' / 'experiments.md', PAGES / 'lab' / 'experiments.md')
    nav.append({'Experiment record': 'lab/experiments.md'})
    return nav


def mkdocs_yml(nav: list) -> str:
    import json
    return '\n'.join([
        'site_name: reaver_nb', f'repo_url: {REPO}', 'docs_dir: docs', f'site_dir: {SITE}',
        'theme: {name: material, features: [navigation.sections, content.code.copy]}',
        'markdown_extensions: [tables, fenced_code, toc, admonition]',
        # links into the repository (nbs/..., lab/...) are fine on GitHub; on the site they are not pages
        'validation: {links: {not_found: info, unrecognized_links: info, absolute_links: info}, nav: {omitted_files: info}}',
        'nav: ' + json.dumps(nav)]) + '\n'


if __name__ == '__main__':
    nav = build_markdown()
    (OUT / 'mkdocs.yml').write_text(mkdocs_yml(nav))
    pages = sum(len(v) if isinstance(v, list) else 1 for item in nav for v in item.values())
    print(f'wrote {OUT} ({pages} pages)')
    if '--no-build' not in sys.argv:
        r = subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--strict', '-q', '-f', str(OUT / 'mkdocs.yml')])
        if r.returncode: sys.exit(r.returncode)
        print(f'built the site into {SITE} ({sum(1 for _ in SITE.rglob("*.html"))} html pages)')
