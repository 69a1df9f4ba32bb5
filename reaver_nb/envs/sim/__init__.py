"""The seven SC2LE mini-games as a JAX simulation (lesson: `nbs/18_minigames.ipynb`), in six modules that import one way:
`engine` (units, orders, movement, the fight, the pysc2 function calls on the unit table) <- `render` (feature layers)
<- `game` (`MiniGame`: Specs, observations, `reset`/`step`) <- `economy` (workers, buildings, supply) <- `maps` (the
seven maps, `MINIGAMES`) <- `players` (scripted and random players, `play`). This package re-exports their public names.
"""
# Hand-written (the six modules are exported from nbs/18a-18f): no notebook exports a package's __init__.
from . import engine, render, game, economy, maps, players
from .engine import *
from .render import *
from .game import *
from .economy import *
from .maps import *
from .players import *

__all__ = [n for m in (engine, render, game, economy, maps, players) for n in m.__all__]
