#!/usr/bin/env python
"""Experiment for issue 5: does PPO's late rise on jax:MoveToBeacon come from FullyConv's convolutions drifting under
the noise of the non-spatial heads? Trains the default with one of two patches of the model (not package options):

- `frozen`: the convolutions never train (their random initial features; the 256-unit layer and the heads train);
- `fc_nograd`: the 256-unit layer reads the convolutions through a stop-gradient, so only the spatial heads train them.

    python lab/probes/trunk_variants.py MODE RUN_ID [--steps 250000] [--seed 0] [--results-dir results] [--gin-param B ...]

Screen layers only (the jax:MoveToBeacon config has no minimap layers). README Results: neither rose by 250k frames.
"""
import argparse
import jax, jax.numpy as jnp
import flax.linen as nn
import reaver_nb
import reaver_nb.models.fullyconv as fcm
import reaver_nb.models.nets as nets

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
ap.add_argument('mode', choices=('frozen', 'fc_nograd')); ap.add_argument('run_id')
ap.add_argument('--steps', type=int, default=250_000); ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--results-dir', default='results'); ap.add_argument('--gin-param', action='append', default=[])
args = ap.parse_args()

class PatchedFullyConv(fcm.FullyConv):
    @nn.compact
    def __call__(self, obs):
        state = fcm.FeatureLayers(self.obs_spec, 'screen', self.embed_dim, self.conv, name='screen')(obs)
        if args.mode == 'frozen': state = jax.lax.stop_gradient(state)
        flat = state.reshape(state.shape[:-3] + (-1,))
        if args.mode == 'fc_nograd': flat = jax.lax.stop_gradient(flat)
        fc = nn.relu(nn.Dense(self.fc_dim, kernel_init=fcm._vs(), name='fc')(flat))
        value_in = fc if self.value_through_trunk else jax.lax.stop_gradient(fc)
        value = nn.Dense(1, kernel_init=fcm._vs(0.1), name='value')(value_in)[..., 0]
        lead, dists = state.shape[:-3], []
        for s in self.act_spec:
            if s.spatial: d = fcm.Conv(1, 1, self.conv, fcm._vs(0.1), name=f'spatial_{s.name}')(state).reshape(lead + (-1,))
            else: d = nn.Dense(s.n, kernel_init=fcm._vs(0.1), name=f'logits_{s.name}')(fc)
            dists.append(d)
        avail = obs[self.obs_spec.names.index('available_actions')]
        dists[0] = jnp.where(avail > 0, dists[0], -1e9)
        return dists, value

nets.FullyConv = PatchedFullyConv   # make_model builds this one
reaver_nb.train(steps=args.steps, seed=args.seed, run_id=args.run_id, results_dir=args.results_dir,
                gin_params=args.gin_param)
