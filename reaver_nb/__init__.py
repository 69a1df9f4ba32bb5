"""Reaver re-imagined in JAX: A2C and PPO for StarCraft II and gymnasium, authored in notebooks, Colab first.

Modules:

- `reaver_nb.envs.minigames`: MoveToBeacon, CollectMineralShards, FindAndDefeatZerglings, DefeatRoaches and DefeatZerglingsAndBanelings (the economy maps: `18b_economy`) as pure JAX environments with pysc2's observation layers, function ids and Specs: `reset(key)` and `step(key, state, action)` are pure, jittable and `vmap`-able, so a whole training run can fuse into one XLA program.
- `reaver_nb.envs.shm`: `ShmVectorEnv`: env workers write observations straight into shared memory; nothing is pickled per step.
- `reaver_nb.envs.shm_worker`: Worker process of `ShmVectorEnv`: steps a slice of envs and writes results straight into shared memory.
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
    "Evaluate a run (see `reaver_nb.training.run.test`)."
    from reaver_nb.training.run import test as _test
    return _test(*args, **kwargs)

test.__test__ = False  # not a pytest test

def compare(*args, **kwargs):
    "Tested runs next to the published scores of their maps (see `reaver_nb.results.compare`)."
    from reaver_nb.results import compare as _compare
    return _compare(*args, **kwargs)
