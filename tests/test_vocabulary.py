"""One vocabulary in what a user reads: no issue numbers or work-session words (the project's process) in the README,
the notebooks (lessons, Colab), the package's modules (API pages, docstrings, messages, comments shown in lessons),
the shipped configs, the benchmark record, `--help` and `reaver doctor`; and one list of learning algorithms, from
`AGENTS`, that the package description, the README and `reaver --help` all give.

Left out on purpose: `docs/experiments.md` and `lab/`, the project's own lab record (dated, by issue), which the docs
site does not publish."""
import contextlib, io, json, re, tomllib
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
PROCESS = re.compile(r'\bissues? #?\d+|\b(first|second|third|\w+th) (work )?session\b', re.I)
COMMANDS = [[], ['train'], ['test'], ['compare'], ['plot'], ['export'], ['import'], ['sc2'], ['sc2', 'install'],
            ['sc2', 'doctor'], ['doctor']]


def user_texts():
    "(where, text) of every file a user reads as text."
    yield 'README.md', (ROOT / 'README.md').read_text()
    yield 'bench/README.md', (ROOT / 'bench' / 'README.md').read_text()
    for nb in sorted([*(ROOT / 'nbs').glob('*.ipynb'), *(ROOT / 'colab').glob('*.ipynb')]):
        for c in json.loads(nb.read_text())['cells']:
            yield f"{nb.relative_to(ROOT)} cell {c.get('id')}", ''.join(c['source'])
    for py in sorted((ROOT / 'reaver_nb').rglob('*.py')):
        if py.name != '_modidx.py': yield str(py.relative_to(ROOT)), py.read_text()
    for gin in sorted((ROOT / 'reaver_nb' / 'configs').rglob('*.gin')):
        yield str(gin.relative_to(ROOT)), gin.read_text()


def run_cli(*argv) -> str:
    from reaver_nb.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), contextlib.suppress(SystemExit): main(list(argv))
    return out.getvalue()


def test_pattern_catches_process_words():
    for said in ('Moved in issue 50', 'the default before Issue 28', 'issues 30, 31', 'see issue #12', 'twelfth session'):
        assert PROCESS.search(said), said
    for fine in ('a session of its own', "Ray's session folder", 'the issue is the order queue', 'GitHub: s2client-api #11'):
        assert not PROCESS.search(fine), fine


def test_no_process_words_in_user_texts():
    found = [f"{where}: ...{text[max(0, m.start() - 40):m.end() + 20]!r}..."
             for where, text in user_texts() for m in PROCESS.finditer(text)]
    assert not found, 'issue numbers or session words a user would read:\n' + '\n'.join(found)


def test_no_process_words_in_help_and_doctor(tmp_path):
    for argv in COMMANDS:
        text = run_cli(*argv, '--help')
        assert text.startswith('usage: reaver'), (argv, text[:200])
        assert not PROCESS.search(text), (argv, PROCESS.search(text))
    text = run_cli('doctor', '--sc2path', str(tmp_path))
    assert 'StarCraft II doctor' in text and not PROCESS.search(text), text
    for internal in ('import_pysc2()', 'descriptor pool', 'marked parsed'):
        assert internal not in text, (internal, text)


def algorithms() -> str:
    from reaver_nb.agents.actor_critic import AGENTS
    names = [a.upper() for a in AGENTS]
    return ', '.join(names[:-1]) + ' and ' + names[-1]


def test_one_list_of_algorithms():
    "The package description, its docstring, the README's first lines and `reaver --help` name the same algorithms."
    said = algorithms()
    assert said == 'A2C, PPO and IMPALA'
    project = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']
    assert f': {said} for StarCraft II' in project['description'], project['description']
    from reaver_nb.agents.actor_critic import AGENTS
    assert set(AGENTS) <= set(project['keywords'])
    import reaver_nb
    assert reaver_nb.__doc__.splitlines()[0] == project['description']
    readme = (ROOT / 'README.md').read_text()
    assert f'StarCraft II in JAX: {said},' in readme.split('## Setup')[0]
    assert f'({said})' in run_cli('--help').replace('\n', ' ').replace('  ', ' ')
    choices = re.search(r'--agent \{([^}]+)\}', run_cli('train', '--help')).group(1)
    assert choices.split(',') == list(AGENTS)
