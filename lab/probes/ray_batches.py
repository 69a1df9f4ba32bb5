#!/usr/bin/env python
"""Issue 31: what makes IMPALA's batches over Ray, and does their order cost score on jax:MoveToBeacon?

Runs `reaver_nb.train(env, 'impala', backend ray, 2 actors)` with `FleetLearner._take` wrapped to record, for every
update, which actor each rollout came from and how many updates old its parameters were. With two actors and two
rollouts an update the mean lag is 1.00 however the rollouts arrive (two in flight, two taken an update); under load
one actor can hand in two rollouts while the other is still playing, and the batch is then one actor's envs twice
(lags 0 and 1) and the next holds the slow actor's rollout two updates old.

`--regular` takes one rollout from each actor in turn instead of the first two to arrive (every rollout exactly one
update old, as `lab/probes/impala_lag.py --lag 1 --host 2` plays them in one process), to see whether the order of
arrival is what costs the Ray runs their score. Nothing in the package changes.

    python lab/probes/ray_batches.py --steps 102400 --seed 3                 # record the batches
    python lab/probes/ray_batches.py --steps 600000 --seed 3 --regular --test 1000
    python lab/probes/ray_batches.py --env CartPole-v1 --steps 500000 --nodes 2 --gin-param "RaySettings.envs_per_actor = 4"

`--nodes 2` starts a two-node cluster on this machine as `tests/test_fleet.py` does (`ray.cluster_utils.Cluster`,
2 CPUs a node), where IMPALA on CartPole ended at 188-251 while a one-node Ray reached 494-500.
"""
import argparse, collections, json
from pathlib import Path
import numpy as np
import reaver_nb
from reaver_nb.training import fleet

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('--env', default='jax:MoveToBeacon')
ap.add_argument('--steps', type=int, default=102_400)
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--regular', action='store_true', help="one rollout from each actor in turn (no faults handled)")
ap.add_argument('--test', type=int, default=0, help="episodes of `reaver test` on the final weights (0: none)")
ap.add_argument('--results-dir', default='results')
ap.add_argument('--nodes', type=int, default=0, help="start a cluster of this many nodes here (0: RaySettings' own Ray)")
ap.add_argument('--gin-param', action='append', default=[])
args = ap.parse_args()

BATCHES = []   # per update: [(actor, lag), ...]

class Recording(dict):
    "The learner's pending calls; records the actor of each call it hands back."
    taken = []
    def pop(self, k, *a):
        v = dict.pop(self, k, *a); Recording.taken.append(v[0]); return v

def regular_take(self, count):
    "One rollout from each actor in turn; each actor is sent the current parameters as soon as its rollout is in."
    ray, out = self.ray, []
    by_actor = {i: ref for ref, (i, _) in self.pending.items()}
    for i in sorted(by_actor)[:count]:
        ref = by_actor[i]
        out.append(ray.get(ref)); self.pending.pop(ref)
        self._submit(i)
    return out

original_init, original_take = fleet.FleetLearner.__init__, fleet.FleetLearner._take
def init(self, *a, **k):
    original_init(self, *a, **k); self.pending = Recording()
def take(self, count):
    Recording.taken = []
    out = (regular_take if args.regular else original_take)(self, count)
    BATCHES.append([(i, self.version - r['version']) for i, r in zip(Recording.taken[-len(out):], out)])
    return out
fleet.FleetLearner.__init__, fleet.FleetLearner._take = init, take

gin = ["RunSettings.backend = 'ray'", "RaySettings.actors = 2", *args.gin_param]
if args.nodes:
    import os, ray
    from ray.cluster_utils import Cluster
    os.environ['RAY_USAGE_STATS_ENABLED'] = '0'
    cluster = Cluster(initialize_head=True, head_node_args=dict(num_cpus=2, include_dashboard=False))
    for _ in range(args.nodes - 1): cluster.add_node(num_cpus=2)
    ray.init(address=cluster.address, logging_level='warning', log_to_driver=False)
name = args.env.split(':')[-1].split('-')[0]
run_id = f"batches_{name}_{'regular' if args.regular else 'arrival'}_s{args.seed}" + (f"_{args.nodes}nodes" if args.nodes else '')
out = reaver_nb.train(args.env, 'impala', steps=args.steps, seed=args.seed, run_id=run_id, results_dir=args.results_dir,
                      force=True, gin_params=gin, verbose=False)
one = sum(len({i for i, _ in b}) == 1 for b in BATCHES)
lags = collections.Counter(l for b in BATCHES for _, l in b)
pairs = collections.Counter(tuple(sorted(l for _, l in b)) for b in BATCHES)
print(f"{run_id}: rolling return {out['last'].get('ep_return_mean')} at {out['frames']:,} frames in {out['time']:.0f} s; "
      f"{len(BATCHES)} updates; batches of one actor's rollouts {one} ({one / len(BATCHES):.0%}); "
      f"rollouts by lag {dict(sorted(lags.items()))}; batches by lags {dict(pairs.most_common())}", flush=True)
Path(args.results_dir, run_id, 'batches.json').write_text(json.dumps(BATCHES))
if args.test: reaver_nb.test(run_id, episodes=args.test, results_dir=args.results_dir)
if args.nodes: ray.shutdown(); cluster.shutdown()
