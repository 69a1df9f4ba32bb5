"""One cell of tools/pysc2_matrix.sh: pysc2 imports through reaver_nb.sc2.compat and the mock game runs."""
import os, sys, time
os.environ.setdefault('PYGAME_HIDE_SUPPORT_PROMPT', '1')
t = time.time()
from reaver_nb.sc2.compat import import_pysc2, pysc2_status
import_pysc2()
from pysc2.env import mock_sc2_env, sc2_env
from pysc2.lib import actions, features
from s2clientprotocol import sc2api_pb2 as sc_pb
env = mock_sc2_env.SC2TestEnv(agent_interface_format=sc2_env.AgentInterfaceFormat(
    feature_dimensions=sc2_env.Dimensions(screen=16, minimap=16)))
ts = env.reset()
for _ in range(5): ts = env.step([actions.FUNCTIONS.no_op()])
assert ts[0].observation.feature_screen.shape == (len(features.SCREEN_FEATURES), 16, 16)
req = sc_pb.Request(ping=sc_pb.RequestPing())
assert sc_pb.Request.FromString(req.SerializeToString()) == req
env.close()
s = pysc2_status()
print(f"Python {sys.version.split()[0]} protobuf {s['protobuf']} ({s['protobuf_backend']}): {s['protocol']}; "
      f"{time.time() - t:.1f} s")
