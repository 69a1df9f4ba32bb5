"""What SC2-RL (nicoladainese96/SC2-RL) logged on the real game: which runs are final, with which configuration.

Our own table, written from reading the checkout at the pinned commit (sources are named per entry). It holds no
code and no data of SC2-RL: the curves themselves are read from a checkout at run time (`real_curves.py`).
"""
from __future__ import annotations

PINNED_COMMIT = '20eaff007473c74c284263735c2fa96491b642bd'  # master, 2020-10-29 ("Create README.md")
CONVLSTM_COMMIT = '9c85346541c559c73b6d9537ac0b247dc5191342'  # submodule ConvLSTM_pytorch at that commit

MAPS = ('MoveToBeacon', 'CollectMineralShards', 'FindAndDefeatZerglings', 'DefeatZerglingsAndBanelings',
        'DefeatRoaches', 'CollectMineralsAndGas', 'BuildMarines')

# --- A2C (run.py + SC_Utils/train_v5.py) -------------------------------------------------------------------------
# Common to every logged A2C run below: Adam (train_v5.py:165), gamma 0.99 and n-step 20 (hard-coded, run.py:87),
# trajectory (unroll) 60 ("60-unroll-len" in every .npy name), all useful layers (38 input channels, "38-in-channels"),
# conv 32 + player 16 channels, 256 features, the 20 default action names (HPs saved in each run's .npy).
# A logged step is one ParallelEnv.step over all n_train_processes envs (train_v5.py:186,194), so it is
# n_train_processes agent steps ("frames"; each agent step is step_mul 8 game loops). Each logged score is the mean
# of 5 test episodes on a separate env (train_v5.py:154,242-276), played outside the step count.
#
# Process count: NOT recorded anywhere in the repository for any A2C run (the .npy files keep game_params, HPs,
# score, losses, keywords; no train_dict; the thesis PDF is absent from the snapshot). Part25's batch study used the
# final MoveToBeacon config with 1, 2, 4, 8, 16, 32 processes; per logged step the five final runs learn like the
# 16-process group (at 12k logged steps: final 1.6, 3.2, 20.4, 23.2, 23.6; 16 procs: 3 of 10 runs below 10; 32 procs:
# all 10 >= 21.4; 8 procs: all <= 4.0), so 16 is taken (20, the thesis' core count, is also consistent; <= 8 and 32
# are not). The other maps' final runs share the campaign (same commit, lr, res, H) and are given the same 16.
A2C_COMMON = dict(traj_length=60, n_steps=20, gamma=0.99, optimizer='Adam', select_all_layers=True,
                  conv_channels=32, player_features=16, n_features=256, in_channels=38)

A2C_FINAL_PROCS = 16
A2C_FINAL_PROCS_SOURCE = ('inferred: not recorded; MoveToBeacon curves per logged step match the 16-process '
                          'batch-study group (Part25 cells 33-48); 20 also consistent')

A2C_RUNS = {
    # map: dict(ids, final, res, lr, H, max_train_steps, test_interval, procs, procs_source, source)
    'MoveToBeacon': dict(
        ids=('GWCV', 'AFBF', 'GKWT', 'WTAD', 'CTSH'), final=True, res=16, lr=3e-4, H=1e-2,
        max_train_steps=600_000, test_interval=6000, procs=A2C_FINAL_PROCS, procs_source=A2C_FINAL_PROCS_SOURCE,
        reported='best 25.5 (0.2), 5-run 25.0 (0.3), 0.6M steps',
        source='Part25 cells 5, 11; .npy S_MoveToBeacon_lr-0.0003_20-steps_16-res_600000-env-steps_..._<ID>.npy'),
    'CollectMineralShards': dict(
        ids=('UJAO', 'NCCO', 'NATR', 'CGBT', 'BXIK'), final=True, res=16, lr=3e-4, H=1e-2,
        max_train_steps=2_800_000, test_interval=6000, procs=A2C_FINAL_PROCS, procs_source=A2C_FINAL_PROCS_SOURCE,
        reported='best 106.3 (0.9), 5-run 101 (7), 2.8M steps',
        source='Part25 cells 13, 17; .npy ..._16-res_2800000-env-steps_..._<ID>.npy'),
    'FindAndDefeatZerglings': dict(
        ids=('NAET', 'WKHT', 'YELI', 'ZEBG', 'DYJS'), final=True, res=16, lr=3e-4, H=1e-2,
        max_train_steps=2_800_000, test_interval=6000, procs=A2C_FINAL_PROCS, procs_source=A2C_FINAL_PROCS_SOURCE,
        reported='best 41 (1), 5-run 37 (6), 2.8M steps',
        source='Part25 cells 19, 23; .npy ..._16-res_2800000-env-steps_..._<ID>.npy'),
    'DefeatZerglingsAndBanelings': dict(
        ids=('IKKD', 'XYBK', 'UBSM', 'MPDF', 'HFCN'), final=True, res=16, lr=3e-4, H=1e-2,
        max_train_steps=2_500_000, test_interval=6000, procs=A2C_FINAL_PROCS, procs_source=A2C_FINAL_PROCS_SOURCE,
        reported='best 53 (2), 5-run 37 (17), 2.5M steps (IKKD has no .npy; its log stops at 2,466,000)',
        source='Part25 cells 25, 29; .npy ..._16-res_2500000-env-steps_..._<ID>.npy (4 of 5)'),
    # Not final: the only A2C logs of the last three maps (commit ce23abb, 2020-08-03, "added some batched A2C
    # trainings"); none of them is in Part25 and the thesis reports no A2C result for them.
    'DefeatRoaches': dict(
        ids=('CMLE',), final=False, res=32, lr=7e-4, H=7e-3,
        max_train_steps=600_000, test_interval=12000, procs=None, procs_source='unknown: not recorded',
        reported='none (not in Part25)',
        source='.npy S_DefeatRoaches_lr-0.0007_20-steps_32-res_600000-env-steps_60-unroll-len_38-in-channels_CMLE.npy'),
    'CollectMineralsAndGas': dict(
        ids=('LMGH',), final=False, res=32, lr=7e-4, H=7e-3,
        max_train_steps=600_000, test_interval=12000, procs=None, procs_source='unknown: not recorded',
        reported='none (not in Part25); the log is 0 at 43 of 50 points (max 26 once)',
        source='.npy S_CollectMineralsAndGas_lr-0.0007_20-steps_32-res_600000-env-steps_..._LMGH.npy'),
    'BuildMarines': dict(
        ids=('MRXR',), final=False, res=32, lr=7e-4, H=7e-3,
        max_train_steps=600_000, test_interval=12000, procs=None, procs_source='unknown: not recorded',
        reported='none; the log stops at 276,000 (23 points)',
        source='no .npy: res/lr/H/max steps ASSUMED equal to its batch (CMLE, LMGH, OWAJ, MQTT of commit ce23abb); '
               'test interval 12000 read from the log'),
}

# Earlier (non-final) A2C logs of the final maps from the same batch as CMLE/LMGH/MRXR, for reference only.
A2C_EARLIER = {'CollectMineralShards': ('OWAJ',), 'FindAndDefeatZerglings': ('MQTT',),
               'DefeatZerglingsAndBanelings': ('MLZP',)}

# Part25 cells 33-48: the MoveToBeacon batch study (final config, 720k frames each; logs every 60 logged steps).
A2C_BATCH_STUDY = {
    1: ('HFTD', 'TDJY', 'VSHL', 'DVHJ', 'XSVB', 'RMVZ', 'FUIW', 'HINK', 'SGNV', 'DHIX'),
    2: ('NXIB', 'FMVG', 'UOSG', 'GIOK', 'LUFE', 'NWSB', 'RVOB', 'GFUM', 'ZALS', 'LPDR'),
    4: ('PFNQ', 'XXDY', 'FBYX', 'COPW', 'QZMX', 'EQJT', 'WYBD', 'OLPG', 'KEOJ', 'NMOH'),
    8: ('FFQB', 'SEBN', 'ZEMO', 'KCSY', 'ZSKR', 'PVJS', 'GAEY', 'FUDI', 'ADNC', 'GNBU'),
    16: ('VCNR', 'WGTM', 'PQRY', 'NZZX', 'CGLL', 'DVLJ', 'QLOP', 'SCEL', 'CUYD', 'TPTQ'),
    32: ('VJEP', 'FUCC', 'KNEX', 'HGEF', 'CMMB', 'POIR', 'DLTD', 'ROSQ', 'UDEB', 'GRTD'),
}

# --- IMPALA (monobeast.py) ---------------------------------------------------------------------------------------
# A logged step is one optimizer step of batch_size trajectories of unroll_length: `step += T #* B`
# (monobeast.py:504), so a logged step is batch_size agent steps. Its score column is mean_episode_return of the
# training episodes that ended inside the batch (monobeast.py:321), not test episodes. The final runs' logs.csv
# live in ../logs/torchbeast (outside the repository: Results/README.md) and are NOT in the checkout; only the plots
# and the printed flags in Part21 are.
IMPALA_COMMON = dict(
    res=32,                     # monobeast default; Part21 does not print it and the README command does not set it
    unroll_length=60,           # default; the printed logs.csv step column moves in 60s (Part21 cells 23, 37)
    batch_size=20,              # printed, Part21 cells 21, 35, 47, 68
    num_actors=20,              # README's command (--num_actors 20 --batch_size 20 ...); thesis: 20 CPU cores
    num_learner_threads=2, num_buffers=40, optim='RMSprop',  # README's command
    learning_rate=3e-4, entropy_cost=5e-4,                   # printed, Part21 cells 21, 35, 47, 68
    baseline_cost=0.5, discounting=0.99, reward_clipping='abs_one', alpha=0.99, epsilon=0.01, momentum=0,
    grad_norm_clipping=40.0)    # monobeast defaults

IMPALA_RUNS = {
    'MoveToBeacon': dict(xpids=tuple(f'MoveToBeacon{i}' for i in range(1, 6)), total_steps=600_000,
                         reported='best 25.6 (0.2), 5-run 25.2 (0.3), 0.6M', source='Part21 cells 20-31'),
    'CollectMineralShards': dict(xpids=tuple(f'CollectMineralShards{i}' for i in range(1, 6)),
                                 total_steps=6_000_000, reported='best 98.5 (0.8), 5-run 90 (14), 6M',
                                 source='Part21 cells 33-44'),
    'FindAndDefeatZerglings': dict(xpids=tuple(f'FindAndDefeatZerglings{i}' for i in range(1, 6)),
                                   total_steps=6_000_000, reported='best 46.4 (0.6), 5-run 44 (1), 6M',
                                   source='Part21 cells 46-58'),
    'DefeatZerglingsAndBanelings': dict(xpids=tuple(f'DefeatZerglingsAndBanelings{i}' for i in range(1, 6)),
                                        total_steps=16_000_000,
                                        reported='best 76 (3), 5-run 61 (8), 11-16M (run 1 stopped at 11,053,380)',
                                        source='Part21 cells 67-78'),
}
# DefeatRoaches: only DefeatRoaches_v2_1 (monobeast_v2, the relational architecture, lr 1e-5, 12M) printed in Part21
# cells 60-65, ending at 0; CollectMineralsAndGas and BuildMarines "have not been attempted" (Part21 cell 78).


def a2c_frames_per_logged_step(m: str) -> int | None:
    "Agent steps per logged A2C step for map `m` (its process count), None where unknown."
    return A2C_RUNS[m]['procs']


def impala_frames_per_logged_step(m: str) -> int:
    return IMPALA_COMMON['batch_size']
