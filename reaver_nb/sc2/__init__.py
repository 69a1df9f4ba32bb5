"""StarCraft II: install the game (`install`), check a machine (`doctor`), avoid Colab's tcmalloc crash
(`prepare_game_environment`, `GameCrashed`), and import pysc2 on modern Python (`import_pysc2`).

Hand-written: the names resolve to the submodules' own objects (`installer`, `launch`, `compat`) on first use, so
importing this package imports neither pysc2 nor anything heavy."""
import importlib

_LAZY = {'install': 'installer', 'doctor': 'launch', 'prepare_game_environment': 'launch', 'GameCrashed': 'launch',
         'import_pysc2': 'compat'}
__all__ = list(_LAZY)

def __getattr__(name):
    if name not in _LAZY: raise AttributeError(f"module 'reaver_nb.sc2' has no attribute {name!r}")
    return getattr(importlib.import_module(f'.{_LAZY[name]}', __name__), name)
