"""Reaver re-imagined in JAX: A2C, PPO and IMPALA for StarCraft II and gymnasium, authored in notebooks, Colab first.

Modules:

- `reaver_nb.envs.shm`: `ShmVectorEnv`: env workers write observations straight into shared memory; nothing is pickled per step.
- `reaver_nb.envs.shm_worker`: Worker process of `ShmVectorEnv`: steps a slice of envs and writes results straight into shared memory.
- `reaver_nb.envs.sim.economy`: Workers, buildings, training queues and supply on the simulation's unit table: `Economy`, the state beside the units (it rides in `GameState.extra`), and `EconomyGame`, a `MiniGame` whose rows come in blocks, one per kind, and whose game loop walks, harvests, builds and trains. Its two maps, CollectMineralsAndGas and BuildMarines, are in `reaver_nb.envs.sim.maps`.
- `reaver_nb.envs.sim.engine`: The unit table of the JAX StarCraft II simulation and one game loop over it: the kinds and their game data (`KIND`), orders and their queue, movement, the fight and the separation (`game_loop`); and the pysc2 function calls that change the table (selection, orders). Pure functions of a `Units` pytree, so `jit` and `vmap` apply; the environment (`reaver_nb.envs.sim.game`) and the maps are built on them.
- `reaver_nb.envs.sim.game`: `MiniGame`: the simulation behind pysc2's interface. Specs, observations (the feature layers, `available_actions`, `player`), the pysc2 function calls an agent sends, and `reset(key)` / `step(key, state, action)` as pure, jittable, `vmap`-able functions; its state, `GameState`; its options, `MiniGameOptions` (gin: `MiniGameSettings`). A map is a subclass that places its units and says its rules.
- `reaver_nb.envs.sim.maps`: The seven SC2LE mini-games on the simulation, each as its map's script (`MapScript.galaxy`, `Regions`) sets it: the units and where they start, the rewards, respawns and waves, and the end. A map is a `MiniGame` with its own `new_units`, `draw` and `rules` (the economy maps are `EconomyGame`s); `MINIGAMES` is the registry of all seven, in SC2LE's order.
- `reaver_nb.envs.sim.players`: Players that calibrate the simulation: scripted players that play each map well through the same pysc2 function calls an agent sends (`scripted_policy`, `economy_script`), uniformly random play as pysc2's `random_agent` plays (`random_policy`), and `play`, which runs a policy's episodes side by side in one `jit`. Their scores next to the published ones are in `nbs/18_minigames.ipynb`.
- `reaver_nb.envs.sim.render`: pysc2's feature layers drawn from the simulation's unit table (`feature_layers`): which pixels of a view each unit covers, the unit drawn on top, and the layers the JAX mini-games render (`player_relative`, `selected`, `visibility_map`, `unit_hit_points_ratio`, `unit_density`, `player_id`, `unit_type`, `unit_hit_points`, `pathable`, `buildable`, the minimap's `camera`, and the layers that hold 0 on these maps) in pysc2's values. The per-pixel reductions run in narrow integers and in passes of a few units, the forms XLA's CPU backend runs fastest.
- `reaver_nb.pysc2_agent`: `Pysc2Agent`: a trained reaver_nb run as a pysc2 agent (`pysc2.agents.base_agent.BaseAgent`), for `pysc2.env.run_loop`, pysc2's agent runner and the real game; and `test_on_env`, a run played on another env with the same Specs (`reaver test RUN --env MoveToBeacon`: a run trained on `jax:MoveToBeacon` on the real game). Above `training` in the layers: it reads runs with `training.evaluate.load_run`, which agents may not import.
- `reaver_nb.sc2.installer`: Download and install the headless StarCraft II Linux client and its maps.
- `reaver_nb.training.fused`: For JAX-native environments the whole training run — rollouts over `vmap`-ed envs, returns, the agent's update — is one compiled XLA program; `K` seeds train side by side in it (`vmap` over keys; on a CPU, image models write the seeds out one after another instead), sharded over the devices there are. The host runs it in chunks of updates, so logs, live plots and atomic checkpoints still happen during long runs, and `--resume` works as on the host path."""

__version__ = "0.1.0"

def train(*args, dashboard=None, progress=None, callbacks=(), **kwargs):
    """Train an agent (see `reaver_nb.training.run.train`), showing the live dashboard in a notebook and a progress bar
    in a terminal (`dashboard=False` / `progress=False` turn them off; pass a `Dashboard` to keep a handle on it)."""
    from reaver_nb.training.run import train as _train
    from reaver_nb.ui.dashboard import Dashboard, run_callbacks
    shown = run_callbacks(dashboard, progress)
    if any(isinstance(c, Dashboard) for c in shown):
        kwargs.setdefault('verbose', False)   # the dashboard shows Reaver's log lines itself
        bindings = list(kwargs.get('gin_params', ()))
        if not any('log_seconds' in b for b in bindings):   # a live plot wants a row every few seconds
            bindings.append(f'RunSettings.log_seconds = {Dashboard.log_seconds}')
        kwargs['gin_params'] = bindings
    return _train(*args, callbacks=[*callbacks, *shown], **kwargs)

def test(*args, **kwargs):
    "Evaluate a run (see `reaver_nb.training.evaluate.test`)."
    from reaver_nb.training.evaluate import test as _test
    return _test(*args, **kwargs)

test.__test__ = False  # not a pytest test

def compare(*args, **kwargs):
    "Tested runs next to the published scores of their maps (see `reaver_nb.results.compare`)."
    from reaver_nb.results import compare as _compare
    return _compare(*args, **kwargs)
