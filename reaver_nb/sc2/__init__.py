"""StarCraft II: install the game (`install`), check a machine (`doctor`), avoid Colab's tcmalloc crash
(`prepare_game_environment`), and import pysc2 on modern Python (`import_pysc2`).

Hand-written: it names the public functions of the submodules (`installer`, `launch`, `compat`) without importing
pysc2 (or anything heavy) until one is called."""

def install(*args, **kwargs):
    "Download and unpack StarCraft II and its maps; see `reaver_nb.sc2.installer.install`."
    from .installer import install as _install
    return _install(*args, **kwargs)

def doctor(*args, **kwargs):
    "Print a checklist of this machine's StarCraft II setup; see `reaver_nb.sc2.launch.doctor`."
    from .launch import doctor as _doctor
    return _doctor(*args, **kwargs)

def prepare_game_environment(*args, **kwargs):
    "Remove tcmalloc from LD_PRELOAD before a game starts; see `reaver_nb.sc2.launch.prepare_game_environment`."
    from .launch import prepare_game_environment as _prepare
    return _prepare(*args, **kwargs)

def import_pysc2():
    "Import pysc2 4.0.0 with the fixes for Python 3.10-3.13 and protobuf >= 4 applied; see `reaver_nb.sc2.compat`."
    from .compat import import_pysc2 as _import
    return _import()

def __getattr__(name):
    if name == 'GameCrashed':
        from .launch import GameCrashed
        return GameCrashed
    raise AttributeError(f"module 'reaver_nb.sc2' has no attribute {name!r}")
