"""Moved: the economy maps are in the package `reaver_nb.envs.sim`; importing a name from here says where."""
# Hand-written (no notebook): see reaver_nb/envs/minigames.py.
from .minigames import moved

def __getattr__(name):
    if name.startswith('__'): raise AttributeError(name)
    raise moved(__name__, name)
