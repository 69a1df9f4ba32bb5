"""Build the documentation site from the notebooks, with their outputs, from a clean checkout, in one command:

    python tools/docs.py             # run every notebook, write _docs/ (markdown + mkdocs.yml), build the site in _site/
    python tools/docs.py --saved     # use the outputs the notebooks already hold (after `nbdev-test --save`)
    python tools/docs.py --no-build  # only the markdown

The pages: the home page (nbs/index.ipynb, as the README shows it), Getting started (nbs/getting_started.ipynb), the
CLI reference (every command and flag of `reaver`, read from its argparse parser), a lesson per notebook, and an API
reference per module (names, signatures and docstrings read from the modules' source).

Running the notebooks is nbdev-test's own run of each (`nbdev.test.test_nb`: the same skipped cells, `IN_TEST=1`,
the same working folder, notebooks in parallel), except that the outputs go to `_docs/notebooks/`: the notebooks in
nbs/ are not touched. A notebook that fails stops the build. In a lesson, prose and examples come first: a code cell
that only checks (its lines are `test_*` calls and asserts) is folded under "Checks", with its output, if any, shown.

nbdev's own docs build (`nbdev-docs`) needs Quarto, a binary that no package registry this project can reach ships,
so the site is built with MkDocs (mkdocs-material) from the same notebooks.
"""
import argparse, ast, base64, json, os, re, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT, SITE = ROOT / '_docs', ROOT / '_site'
PAGES, RAN = OUT / 'docs', OUT / 'notebooks'
REPO = 'https://github.com/reaver-nb/reaver_nb'
TOP = {'index.ipynb': 'index.md', 'getting_started.ipynb': 'getting-started.md'}   # the rest are lessons


# ---------------------------------------------------------------- running the notebooks (nbdev-test's way)

def _run_one(fn, out_dir, skip_flags, cell_timeout):
    "One notebook through nbdev's test_nb, its outputs written to `out_dir` instead of back into the notebook."
    import nbdev.test as T
    from fastcore.nbio import write_nb
    T.write_nb = lambda nb, path: write_nb(nb, Path(out_dir) / Path(path).name)
    start = time.time()
    ok, _ = T.test_nb(fn, skip_flags=skip_flags, save=True, basepath=ROOT, cell_timeout=cell_timeout)
    print(f"{'ran' if ok else 'FAILED'} {Path(fn).name} ({time.time() - start:.0f} s)", flush=True)
    return ok


def run_notebooks(notebooks, out_dir: Path = RAN, n_workers=None) -> list:
    "Run `notebooks` as nbdev-test does; their executed copies land in `out_dir`. Returns the ones that failed."
    from fastcore.parallel import parallel
    from nbdev.config import get_config
    cfg = get_config(ROOT)
    flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags or [])
    shutil.rmtree(out_dir, ignore_errors=True); Path(out_dir).mkdir(parents=True)
    n = n_workers if n_workers is not None else min(os.cpu_count() or 1, 8)
    here = os.getcwd(); os.chdir(ROOT / 'nbs')
    try: ok = parallel(_run_one, [Path(nb).resolve() for nb in notebooks], out_dir=Path(out_dir).resolve(),
                       skip_flags=flags, cell_timeout=cfg.cell_timeout or None, n_workers=n if len(notebooks) > 1 else 0)
    finally: os.chdir(here)
    return [nb for nb, good in zip(notebooks, ok) if not good]


# ---------------------------------------------------------------- notebook -> markdown

_ANSI = re.compile(r'\x1b\[[0-9;?]*[A-Za-z]')
_LIST = re.compile(r'^\s{0,3}([-*+]|\d+[.)])\s')


def fix_markdown(text: str) -> str:
    """Markdown as Python-Markdown (MkDocs) reads it the way GitHub and Jupyter do: a blank line before a list that
    follows a paragraph line, and nested list items indented by four spaces (two, in the notebooks)."""
    out, fence, in_list, blank = [], False, False, True
    for line in text.splitlines():
        if line.lstrip().startswith(('```', '~~~')): fence = not fence
        elif not fence:
            if not line.strip(): blank = True; out.append(line); continue
            item = _LIST.match(line)
            if item:
                if not in_list and not blank and not out[-1].lstrip().startswith('|'): out.append('')
                in_list = True
            elif blank and not line.startswith((' ', '\t')): in_list = False
            if in_list and re.match(r' {2,3}([-*+]|\d+[.)])\s', line): line = '    ' + line.lstrip()
            blank = False
        out.append(line)
    return '\n'.join(out)


def directives(src: str) -> dict:
    return {l[3:].split(':')[0].strip(): l.split(':', 1)[1].strip() if ':' in l else ''
            for l in src.splitlines() if l.startswith('#| ')}


def _code(src: str) -> str:
    return '\n'.join(l for l in src.splitlines() if not l.strip().startswith('#|')).strip('\n')


def is_check(src: str) -> bool:
    "A cell that checks rather than shows: most of its lines are `test_*(...)` calls or asserts."
    lines = [l.strip() for l in src.splitlines() if l.strip() and not l.strip().startswith('#')]
    checks = [l for l in lines if re.match(r'(assert\b|test_\w+\(|try: test_|with .*: test_)', l) or
              re.search(r'\btest_(eq|fail|close|is|ne|shuffled|stdout|warns)\(', l)]
    return bool(checks) and 2 * len(checks) >= len(lines)


def _top_level(tree):
    "The nodes a cell runs itself: everything but the bodies of the functions, classes and lambdas it defines."
    todo = list(tree.body)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))


def prints(src: str) -> bool:
    "Whether a cell shows something: it calls print itself, runs a shell command, or ends with a bare value."
    if src.lstrip().startswith('%%bash'): return True
    try: tree = ast.parse('\n'.join('pass' if l.lstrip().startswith(('%', '!')) else l for l in src.splitlines()))
    except SyntaxError: return False
    if any(isinstance(n, ast.Call) and getattr(n.func, 'id', None) == 'print' for n in _top_level(tree)): return True
    last = tree.body[-1] if tree.body else None
    return isinstance(last, ast.Expr) and not isinstance(last.value, (ast.Call, ast.Await, ast.Constant))


def _fence(text: str, lang: str = 'text') -> str:
    text = _ANSI.sub('', text).replace('\r\n', '\n')
    text = '\n'.join(l.rsplit('\r', 1)[-1] for l in text.split('\n'))       # a progress bar's last state
    ticks = '`' * max(3, max((len(m) for m in re.findall(r'`+', text)), default=0) + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def render_outputs(outputs, stem: str, files: dict) -> list:
    parts = []
    for o in outputs:
        kind = o.get('output_type')
        if kind == 'stream': parts.append(_fence(''.join(o.get('text', ''))))
        elif kind == 'error': parts.append(_fence('\n'.join(o.get('traceback', [])) or o.get('evalue', '')))
        elif kind in ('execute_result', 'display_data'):
            data = o.get('data', {})
            if 'image/png' in data:
                name = f"{stem}_files/out{len(files)}.png"
                files[name] = base64.b64decode(''.join(data['image/png']))
                parts.append(f"![output]({name})")
            elif 'text/html' in data: parts.append(''.join(data['text/html']))
            elif 'text/markdown' in data: parts.append(''.join(data['text/markdown']))
            elif 'text/plain' in data: parts.append(_fence(''.join(data['text/plain'])))
    return [p for p in parts if p.strip()]


def notebook_markdown(nb: dict, stem: str, outputs: bool = True) -> tuple[str, dict]:
    """A notebook as markdown: cells marked `#| hide` left out, `#| echo: false` shows only the output, check cells
    folded; each code cell in a `div.nb-cell` (with `data-prints` when it should show something) and its outputs in a
    `div.nb-output`. Returns the markdown and the output images {relative path: bytes}."""
    parts, files = [], {}
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            parts.append(fix_markdown(src)); continue
        if c['cell_type'] != 'code': continue
        d = directives(src)
        if 'hide' in d or 'default_exp' in d: continue
        code = _code(src)
        if not code: continue
        shown = render_outputs(c.get('outputs', []), stem, files) if outputs else []
        should = outputs and prints(code)
        lang = 'sh' if code.startswith('%%bash') else 'python'
        body = code.split('\n', 1)[1] if lang == 'sh' else code
        block = _fence(body, lang)
        if d.get('echo') == 'false': block = ''
        elif 'export' not in d and is_check(code):
            block = f'<details class="checks" markdown="1">\n<summary>Checks</summary>\n\n{block}\n\n</details>'
        out = (f'<div class="nb-output" markdown="1">\n\n' + '\n\n'.join(shown) + '\n\n</div>') if shown else ''
        parts.append(f'<div class="nb-cell"{" data-prints" if should else ""} markdown="1">\n\n{block}\n\n{out}\n\n</div>')
    return '\n\n'.join(parts) + '\n', files


def title(markdown: str, default: str) -> str:
    m = re.search(r'^# (.+)$', markdown, re.M)
    return m.group(1).strip().replace('`', '') if m else default


# ---------------------------------------------------------------- the CLI reference, from the parser

def _flags(parser) -> list:
    rows = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction) or a.help == argparse.SUPPRESS: continue
        names = ', '.join(a.option_strings) or a.metavar or a.dest
        if a.option_strings and a.nargs != 0:
            names += ' ' + (a.metavar or (('{' + ','.join(map(str, a.choices)) + '}') if a.choices else a.dest.upper()))
        helptext = (a.help or '') % {'default': a.default, 'prog': parser.prog} if a.help else ''
        default = '' if a.default in (None, False, [], argparse.SUPPRESS) or a.nargs == 0 else f'`{a.default}`'
        said = ' '.join(helptext.split()).replace('|', '\\|').replace('<', '&lt;').replace('>', '&gt;')
        rows.append(f"| `{names}` | {said} | {default} |")
    return ['| flag | what it does | default |', '|---|---|---|', *rows] if rows else []


def cli_reference() -> str:
    "Markdown for every command and flag of `reaver`, read from its parser (and the StarCraft II installer's)."
    from reaver_nb.cli import _parser
    from reaver_nb.sc2 import installer
    p = _parser()
    out = ['# CLI reference', '',
           '> Every `reaver` command with every flag, its help and its default, as `reaver COMMAND --help` prints them '
           '(this page is generated from the same parser).', '', _fence(p.format_usage().strip(), 'text'), '',
           p.description or '', '']
    subs = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in subs._choices_actions}
    for name, sp in subs.choices.items():
        out += [f'## `reaver {name}`', '', helps.get(name) or '', '']
        if sp.description and sp.description != helps.get(name): out += [sp.description, '']
        out += [_fence(sp.format_usage().strip(), 'text'), '', *_flags(sp), '']
        inner = next((a for a in sp._actions if isinstance(a, argparse._SubParsersAction)), None)
        for sub, ssp in (inner.choices.items() if inner else ()):
            shelp = next((c.help for c in inner._choices_actions if c.dest == sub), '')
            out += [f'### `reaver {name} {sub}`', '', shelp or '', '']
            if name == 'sc2' and sub == 'install':   # the installer's own command line (`reaver_nb.sc2.installer.cli`)
                ssp = installer.add_install_args(argparse.ArgumentParser(prog='reaver sc2 install'))
            out += [_fence(ssp.format_usage().strip(), 'text'), '', *_flags(ssp), '']
        if name == 'train' and sp.epilog_fn: out += ['The defaults that depend on the env:', '', _fence(sp.epilog_fn()), '']
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------- API pages

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
    if doc: out += [fix_markdown(doc), '']
    if name == 'reaver_nb.cli': out += ['The commands and every flag: the [CLI reference](../reference/cli.md).', '']
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


# ---------------------------------------------------------------- the site

def _write(rel: str, text: str, files: dict):
    path = PAGES / rel
    path.parent.mkdir(parents=True, exist_ok=True); path.write_text(text)
    for f, data in files.items():
        (path.parent / f).parent.mkdir(parents=True, exist_ok=True); (path.parent / f).write_bytes(data)


def build_markdown(source: Path) -> list:
    "Write _docs/docs/ from the notebooks in `source` (executed copies, or nbs/) and return mkdocs' nav."
    shutil.rmtree(PAGES, ignore_errors=True); PAGES.mkdir(parents=True)
    load = lambda nb: json.loads(((source / nb.name) if (source / nb.name).exists() else nb).read_text())
    nbs = sorted((ROOT / 'nbs').glob('*.ipynb'))
    home, files = notebook_markdown(load(ROOT / 'nbs' / 'index.ipynb'), 'index', outputs=False)   # as the README
    _write('index.md', home, files)
    nav = [{'Home': 'index.md'}]
    md, files = notebook_markdown(load(ROOT / 'nbs' / 'getting_started.ipynb'), 'getting-started')
    _write('getting-started.md', md, files)
    nav.append({'Getting started': 'getting-started.md'})
    _write('reference/cli.md', cli_reference(), {})
    nav.append({'CLI reference': 'reference/cli.md'})
    lessons = []
    for nb in nbs:
        if nb.name in TOP: continue
        md, files = notebook_markdown(load(nb), nb.stem)
        _write(f'lessons/{nb.stem}.md', md, files)
        lessons.append({f'{nb.stem.split("_")[0]} {title(md, nb.stem)}': f'lessons/{nb.stem}.md'})
    nav.append({'Lessons': lessons})
    api = []
    for module in sorted((ROOT / 'reaver_nb').rglob('*.py')):
        if module.name == '_modidx.py': continue
        page = api_page(module)
        if page is None: continue
        name, md = page
        _write(f'api/{name}.md', md, {})
        api.append({name: f'api/{name}.md'})
    nav.append({'API reference': api})
    (PAGES / 'extra.css').write_text(
        '.nb-output { border-left: 3px solid var(--md-accent-fg-color--transparent, #ddd); padding-left: .6em; }\n'
        '.nb-output pre, .nb-output code { font-size: .75rem; }\n'
        'details.checks { margin: .2em 0; font-size: .8rem; }\n')
    return nav


def mkdocs_yml(nav: list) -> str:
    return '\n'.join([
        'site_name: reaver_nb', f'repo_url: {REPO}', 'docs_dir: docs', f'site_dir: {SITE}',
        'theme: {name: material, features: [navigation.sections, content.code.copy]}',
        'extra_css: [extra.css]',
        'markdown_extensions: [tables, toc, admonition, md_in_html, attr_list, pymdownx.highlight, pymdownx.superfences]',
        # links into the repository (nbs/..., lab/...) are fine on GitHub; on the site they are not pages
        'validation: {links: {not_found: info, unrecognized_links: info, absolute_links: info}, nav: {omitted_files: info}}',
        'nav: ' + json.dumps(nav)]) + '\n'


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--saved', action='store_true', help='use the outputs the notebooks in nbs/ hold; run nothing')
    ap.add_argument('--no-build', action='store_true', help='write the markdown only')
    ap.add_argument('--n-workers', type=int, default=None, help='notebooks run side by side (default: as nbdev-test)')
    a = ap.parse_args(argv)
    start = time.time()
    if a.saved: source = ROOT / 'nbs'
    else:
        notebooks = sorted((ROOT / 'nbs').glob('*.ipynb'))
        print(f'running {len(notebooks)} notebooks as nbdev-test does (outputs into {RAN.relative_to(ROOT)}/)', flush=True)
        failed = run_notebooks(notebooks, RAN, a.n_workers)
        if failed: sys.exit(f"the docs need every notebook to run; these failed: {', '.join(f.name for f in failed)}")
        source = RAN
    nav = build_markdown(source)
    (OUT / 'mkdocs.yml').write_text(mkdocs_yml(nav))
    pages = sum(len(v) if isinstance(v, list) else 1 for item in nav for v in item.values())
    print(f'wrote {OUT.relative_to(ROOT)}/ ({pages} pages)')
    if not a.no_build:
        env = {**os.environ, 'NO_MKDOCS_2_WARNING': '1'}
        r = subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--strict', '-q', '-f', str(OUT / 'mkdocs.yml')], env=env)
        if r.returncode: sys.exit(r.returncode)
        print(f'built the site into {SITE.relative_to(ROOT)}/ ({sum(1 for _ in SITE.rglob("*.html"))} html pages) '
              f'in {time.time() - start:.0f} s; open {SITE.relative_to(ROOT)}/index.html')


if __name__ == '__main__':
    main()
