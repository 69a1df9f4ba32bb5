"""Our stratified bootstrap (reaver_nb.results) vs rliable's and scipy.stats.bootstrap on the same score matrices:
the intervals they give and the time each takes (best of 3 wall-clock runs). `python bootstrap_vs_rliable.py [reps]`
(default 2000, aggregate_scores' default). Needs rliable whose bootstrap imports: pandas < 3 with arch 7 (run.sh)."""
import sys, time, warnings
import numpy as np, scipy, scipy.stats
from reaver_nb.results import (stratified_bootstrap_ci, bootstrap_ci, aggregate_iqm, aggregate_mean, aggregate_median,
                               aggregate_optimality_gap)
from rliable import library as rly, metrics as rm

FNS = [aggregate_iqm, aggregate_mean, aggregate_median, lambda s: aggregate_optimality_gap(s, 1.)]
ours_f = lambda s: np.array([f(s) for f in FNS])
theirs_f = lambda s: np.array([rm.aggregate_iqm(s), rm.aggregate_mean(s), rm.aggregate_median(s),
                               rm.aggregate_optimality_gap(s, 1.)])

def best(fn, n=3):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); out = fn(); ts.append(time.perf_counter() - t)
    return min(ts), out

def scipy_ci(s, reps, seed):
    "scipy.stats.bootstrap, one sample per task (resampled independently = stratified), percentile method."
    m = s.shape[1]
    def stat(*cols, axis=-1):   # each col [..., n]: stack to [..., n, m] and apply the metrics per batch element
        x = np.stack(cols, -1)
        flat = x.reshape(-1, *x.shape[-2:])
        return np.stack([ours_f(a) for a in flat], -1).reshape(len(FNS), *x.shape[:-2])
    r = scipy.stats.bootstrap(tuple(s[:, j] for j in range(m)), stat, n_resamples=reps, paired=False,
                              vectorized=True, method='percentile', confidence_level=.95, random_state=seed,
                              batch=200)
    return r.confidence_interval.low, r.confidence_interval.high

rng = np.random.default_rng(7)
cases = {'3 seeds x 1 map': rng.normal(0.9, 0.1, (3, 1)),
         '5 seeds x 7 maps': rng.gamma(4, 0.25, (5, 7)),
         '10 seeds x 7 maps': rng.gamma(4, 0.25, (10, 7))}
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
print(f"numpy {np.__version__}, scipy {scipy.__version__}; reps={reps}; metrics: IQM, mean, median, optimality gap")
for name, s in cases.items():
    t_o, (lo, hi) = best(lambda: stratified_bootstrap_ci(s, ours_f, reps, .95, 0))
    _, (lo1, hi1) = best(lambda: stratified_bootstrap_ci(s, ours_f, reps, .95, 1), 1)
    t_r, (_, ci) = best(lambda: rly.get_interval_estimates({'x': s}, theirs_f, reps=reps,
                                                            random_state=np.random.RandomState(0)))
    rlo, rhi = ci['x']
    t_s, (slo, shi) = best(lambda: scipy_ci(s, reps, 0))
    noise = max(np.abs(lo - lo1).max(), np.abs(hi - hi1).max())
    print(f"\n{name}: time ours {t_o:.3f} s, rliable {t_r:.3f} s, scipy {t_s:.3f} s")
    for k, m in enumerate(['IQM', 'mean', 'median', 'opt. gap']):
        print(f"  {m:9s} ours [{lo[k]:.4f}, {hi[k]:.4f}]  rliable [{rlo[k]:.4f}, {rhi[k]:.4f}]  scipy [{slo[k]:.4f}, {shi[k]:.4f}]")
    d_r = max(np.abs(lo - rlo).max(), np.abs(hi - rhi).max()); d_s = max(np.abs(lo - slo).max(), np.abs(hi - shi).max())
    print(f"  largest endpoint difference: ours vs rliable {d_r:.4f}, ours vs scipy {d_s:.4f}; "
          f"ours seed 0 vs seed 1 (Monte Carlo noise) {noise:.4f}")

# the learning-curve band: bootstrap_ci over seeds of the mean at each of 200 points, 1000 reps
curves = rng.normal(0, 1, (5, 200)).cumsum(1)
t_o, (lo, hi) = best(lambda: bootstrap_ci(curves, .95, 1000, 0))
def sc():
    r = scipy.stats.bootstrap((curves,), lambda x, axis: np.mean(x, axis=axis), axis=0, n_resamples=1000,
                              method='percentile', random_state=0, vectorized=True)
    return r.confidence_interval.low, r.confidence_interval.high
t_s, (slo, shi) = best(sc)
_, (lo1, hi1) = best(lambda: bootstrap_ci(curves, .95, 1000, 1), 1)
print(f"\nlearning-curve band (5 seeds x 200 points, 1000 reps): time ours {t_o:.4f} s, scipy {t_s:.4f} s; "
      f"largest endpoint difference {max(np.abs(lo - slo).max(), np.abs(hi - shi).max()):.4f}, "
      f"ours seed 0 vs 1 {max(np.abs(lo - lo1).max(), np.abs(hi - hi1).max()):.4f} (band width ~{np.mean(hi - lo):.2f})")

# a seed that stopped early (no data at the last two points) and a point only one seed reached
c = rng.normal(0, 1, (4, 6)).cumsum(1); c[3, 4:] = np.nan; c[1:, 0] = np.nan
lo, _ = bootstrap_ci(c, .95, 1000, 0)
r = scipy.stats.bootstrap((c,), lambda x, axis: np.nanmean(x, axis=axis), axis=0, n_resamples=1000,
                          method='percentile', random_state=0)
print(f"4 seeds, one stopped after point 4: lower band ours {np.round(lo, 2).tolist()}, "
      f"scipy {np.round(r.confidence_interval.low, 2).tolist()}")
