"""Moved: the JAX mini-games are the package `reaver_nb.envs.sim`; importing a name from here says where."""
# Hand-written (no notebook). The old import place of the simulation (and, through `moved`, of reaver_nb.envs.economy),
# kept so that old code fails with the new place named. The gin name of `MiniGameSettings` (now in
# reaver_nb.envs.sim.game) keeps this module's, so the config.gin files of older runs load unchanged.
import importlib

ROOMS = ('engine', 'render', 'game', 'economy', 'maps', 'players')
# private names of before that other modules needed: public now, under these names
RENAMED = {'_k': 'stat', '_radius': 'radii', '_small_int': 'small_int', '_first': 'first_true', '_argmin': 'first_min',
           '_dist': 'pairwise_dist', '_nearest_sq': 'nearest_sq', '_first_good_else_farthest': 'first_good_else_farthest',
           '_under_mask': 'unit_under', '_select_point': 'select_point', '_select_rect': 'select_rect',
           '_select_army': 'select_army', '_control_group': 'control_group', '_command': 'give_order',
           '_next_order': 'next_order', '_pixel': 'screen_pixel', '_call': 'function_call', '_layers': 'feature_layers',
           '_finished': 'finished', '_is': 'alive_kind', 'ALL_MINIGAMES': 'MINIGAMES'}

def moved(old: str, name: str) -> ImportError:
    "The error for `name` looked up in the old module `old`: the module of `reaver_nb.envs.sim` that holds it now."
    new = RENAMED.get(name, name)
    for room in ROOMS:
        m = importlib.import_module(f'reaver_nb.envs.sim.{room}')
        if new in getattr(m, '__all__', ()) or (new.startswith('_') and new in vars(m)):
            how = f" (renamed from {name})" if new != name else ''
            if new == 'MINIGAMES': how += ": one registry of all seven maps (ALL_MINIGAMES is gone; MINIGAMES held five)"
            where = f"reaver_nb.envs.sim.{room}" if new.startswith('_') else "reaver_nb.envs.sim"
            return ImportError(f"{old}.{name} moved to reaver_nb.envs.sim.{room}: "
                               f"from {where} import {new}{how}")
    return ImportError(f"{old} moved to the package reaver_nb.envs.sim ({', '.join(ROOMS)}), "
                       f"which has no {name!r}.")

def __getattr__(name):
    if name.startswith('__'): raise AttributeError(name)
    raise moved(__name__, name)
