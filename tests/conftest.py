import os, sys, subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

@pytest.fixture
def results(tmp_path):
    return tmp_path / 'results'

def reaver(*args, timeout=300, **kw):
    "Run the CLI as a user would (`python -m reaver_nb ...`), returning the CompletedProcess."
    return subprocess.run([sys.executable, '-m', 'reaver_nb', *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kw)
