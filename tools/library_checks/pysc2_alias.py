"""A pytest plugin (`PYTHONPATH=tools/library_checks pytest -p pysc2_alias ...`): `pysc2` and `pysc2.*` resolve to
`pysc2_evolved` and `pysc2_evolved.*` (the fork's import name), so reaver_nb's pysc2 tests run against the fork.
With PYSC2E_NO_PATCHES=1, reaver_nb.sc2.compat.import_pysc2 imports without rebuilding the protocol modules or
patching random.shuffle (absl flags are still marked parsed, as any program that is not an absl app must)."""
import importlib, importlib.abc, importlib.util, os, sys

class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == 'pysc2' or name.startswith('pysc2.'):
            real = 'pysc2_evolved' + name[5:]
            if importlib.util.find_spec(real) is None: return None
            return importlib.util.spec_from_loader(name, self, is_package=True)
    def create_module(self, spec): return importlib.import_module('pysc2_evolved' + spec.name[5:])
    def exec_module(self, module): pass

sys.meta_path.insert(0, _Alias())

if os.environ.get('PYSC2E_NO_PATCHES'):
    from reaver_nb.sc2 import compat
    def import_pysc2():
        import pysc2.env.sc2_env, pysc2.lib.actions, pysc2.lib.features  # noqa
        compat._done.setdefault('protocol', 'none (pysc2_evolved as it is)')
        compat._mark_flags_parsed()
        return sys.modules['pysc2']
    compat.import_pysc2 = import_pysc2
