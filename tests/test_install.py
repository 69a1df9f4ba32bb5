"""What `pip install -e ".[dev]"` (or any extra) put into this environment: one distribution per module (pygame and
pygame-ce both write `pygame/...`, and whichever comes second silently overwrites the other's files)."""
import importlib.metadata as md
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def file_owners() -> dict:
    """Installed file -> the distributions whose RECORD lists it (metadata and bytecode left out; a namespace package's
    folder, e.g. google/, may hold files of several distributions, one file may not)."""
    owners = {}
    for d in md.distributions():
        for f in d.files or []:
            if f.parts[0] in ('..', '__pycache__') or '__pycache__' in f.parts or f.parts[0].endswith(('.dist-info', '.data')):
                continue
            owners.setdefault(str(f), set()).add(d.metadata['Name'])
    return owners


def _split_by_publisher(names) -> bool:
    "One distribution of the set requires another at its exact version (mujoco and mujoco-core: one package, split)."
    pins = {n: {re.split(r'[\s;\[]', r, maxsplit=1)[0].lower() for r in md.distribution(n).requires or [] if '==' in r}
            for n in names}
    return any(re.sub(r'==.*', '', p) == m.lower() for n in names for p in pins[n] for m in names if m != n)


def test_no_module_installed_twice():
    "No two installed distributions write the same file (the pygame / pygame-ce clash: both write pygame/...)."
    clash = {}
    for path, names in file_owners().items():
        if len(names) > 1 and not _split_by_publisher(names): clash.setdefault(path.split('/')[0], set()).update(names)
    assert not clash, f"two distributions install the same files (they overwrite each other): {clash}"


def test_extras_bring_pygame_not_pygame_ce():
    "pysc2 depends on pygame; an extra that brought gymnasium's [classic-control] would add pygame-ce beside it."
    extras = tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['optional-dependencies']
    for name, reqs in extras.items():
        for r in reqs:
            assert not re.search(r'classic[-_]control|box2d|toy[-_]text|gymnasium\[all\]|pygame-ce', r), (name, r)


BLOCK = """import sys
for m in {mods!r}: sys.modules[m] = None          # as if the extra were not installed
from reaver_nb.cli import main
sys.exit(main({argv!r}))"""


def _without(mods, argv, cwd):
    import subprocess, sys
    return subprocess.run([sys.executable, '-c', BLOCK.format(mods=mods, argv=argv)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_missing_extra_is_one_line(tmp_path):
    "A command whose extra is missing says which extra and how to add it from here, in one line, with exit status 2."
    from reaver_nb.extras import install_command
    run = tmp_path / 'results' / 'r1'; run.mkdir(parents=True)   # a run with one logged row
    (run / 'metrics.jsonl').write_text('{"frames": 512, "time": 1.0, "ep_return_mean": 1.0}\n')
    cases = [(['matplotlib', 'matplotlib.figure'], ['plot', '--results-dir', 'results'], 'notebook'),
             (['ray'], ['train', '--env', 'CartPole-v1', '--backend', 'ray', '--steps', '4096', '--run-id', 'r'], 'ray'),
             (['gymnax'], ['train', '--env', 'gymnax:CartPole-v1', '--run-id', 'g'], 'jax-envs')]
    for mods, argv, extra in cases:
        r = _without(mods, argv, tmp_path)
        assert r.returncode == 2 and 'Traceback' not in r.stderr, (argv, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and f"reaver_nb's [{extra}] extra: {install_command(extra, cwd=tmp_path)}" in lines[0], (argv, lines)
