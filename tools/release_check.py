"""Check the wheel and sdist a release would publish (`python -m build --outdir dist .`): both exist, the wheel holds
every module the notebooks export and the package data the code reads (shipped gin configs, data tables, the pysc2
interface), and neither carries what must not ship (results, virtual environments, caches, lab runs).

    python tools/release_check.py dist
"""
import sys, tarfile, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
dist = Path(sys.argv[1] if len(sys.argv) > 1 else 'dist')
wheels, sdists = sorted(dist.glob('reaver_nb-*.whl')), sorted(dist.glob('reaver_nb-*.tar.gz'))
assert len(wheels) == 1 and len(sdists) == 1, f'expected one wheel and one sdist in {dist}: {wheels + sdists}'
names = set(zipfile.ZipFile(wheels[0]).namelist())
need = {p.relative_to(ROOT).as_posix() for p in (ROOT / 'reaver_nb').rglob('*')
        if p.is_file() and p.suffix in ('.py', '.gin', '.csv', '.json') and '__pycache__' not in p.parts}
missing = sorted(need - names)
assert not missing, f'the wheel lacks {missing[:10]}'
with tarfile.open(sdists[0]) as t: snames = t.getnames()
bad = [n for n in list(names) + snames if any(part in n.split('/') for part in ('results', '.venv', '.venv-ci', '__pycache__',
                                                                         '_site', '_docs', '.ipynb_checkpoints'))]
assert not bad, f'artefacts carry what must not ship: {bad[:10]}'
print(f"{wheels[0].name}: {len(names)} files, every module and data file of reaver_nb/; "
      f"{sdists[0].name}: {len(snames)} files; nothing that must not ship")
