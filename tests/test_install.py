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
