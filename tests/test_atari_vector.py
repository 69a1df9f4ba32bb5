"AleVectorEnv (ale-py's C++ vector env) against GymEnv's Atari path: same Specs, and the same steps where ALE allows."
import sys
from functools import partial
from unittest import mock
import numpy as np
import pytest

pytest.importorskip('ale_py.vector_env')
from reaver_nb.envs.base import InProcessVectorEnv
from reaver_nb.envs.gym import AleVectorEnv, GymEnv, ale_seed
from reaver_nb.envs.registry import make_vector_env

FIELDS = ('obs', 'final_obs', 'reward', 'terminated', 'truncated', 'episode_return', 'episode_length')


def fitting_seed(n):
    "A seed whose n consecutive ALE seeds all fit a non-negative int32, so sticky actions replay as gymnasium's."
    return next(s for s in range(1000) if all(np.random.SeedSequence(s + i).generate_state(2)[1] < 2 ** 31
                                             for i in range(n)))


@pytest.mark.parametrize('env_id,n_actions,steps,kw', [
    ('ALE/Pong-v5', 6, 30, dict(make_kwargs={'max_num_frames_per_episode': 8})),    # truncated every 2 steps
    ('ALE/Breakout-v5', 4, 80, dict(atari_terminal_on_life_loss=True, atari_frame_stack=3, atari_screen_size=64))])
def test_same_steps_as_gym_env_without_noops(env_id, n_actions, steps, kw):
    kw = dict(kw, atari_noop_max=0)
    n, seed = 2, fitting_seed(2)
    ref = InProcessVectorEnv([partial(GymEnv, env_id, **kw)] * n)
    ale = AleVectorEnv(env_id, n, **kw)
    assert (ale.obs_spec, ale.act_spec) == (ref.obs_spec, ref.act_spec)
    np.testing.assert_array_equal(ref.reset(seed=seed)[0], ale.reset(seed=seed)[0])
    rng, ends = np.random.default_rng(0), 0
    for t in range(steps):
        act = (rng.integers(0, n_actions, n).astype(np.int32),)
        a, b = ref.step(act), ale.step(act)
        for f in FIELDS:
            x, y = getattr(a, f), getattr(b, f)
            x, y = (x[0], y[0]) if isinstance(x, tuple) else (x, y)
            assert x.dtype == y.dtype, (f, t)
            np.testing.assert_array_equal(x, y, err_msg=f'{f} at step {t}')
        ends += a.done.sum()
    ref.close(); ale.close()
    assert ends > 0          # episodes ended: final observations, statistics and auto-resets were compared too


def test_errors_name_what_to_use():
    with pytest.raises(ValueError, match="use 'shm'"): make_vector_env('CartPole-v1', 2, vector_env='ale')
    with pytest.raises(ValueError, match='mode'): AleVectorEnv('ALE/Pong-v5', 2, make_kwargs={'mode': 1})
    with mock.patch.dict(sys.modules, {'ale_py.vector_env': None}):
        with pytest.raises(ModuleNotFoundError, match=r"reaver_nb's \[atari\] extra") as e:
            make_vector_env('ALE/Pong-v5', 2, vector_env='ale')
    from reaver_nb.extras import install_command
    assert install_command('atari') in str(e.value)
    assert e.value.name == 'ale_py'       # the CLI's one-line hint for a missing extra keys on it


def test_noop_starts_and_threads():
    with make_vector_env('ALE/Pong-v5', 4, vector_env='ale', n_workers=2) as venv:
        assert isinstance(venv, AleVectorEnv)
        _, info = venv.env.reset(seed=0)
        assert info['episode_frame_number'].max() <= 30           # at most 30 no-ops, as gymnasium's
        obs = venv.reset(seed=0)[0]
        assert obs.shape == (4, 84, 84, 4) and obs.flags.c_contiguous
    assert ale_seed(1) == 1731038949                               # what gymnasium's AtariEnv gives ALE for seed 1
