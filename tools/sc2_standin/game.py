"""A stand-in for StarCraft II's Linux binary that speaks the game's own protocol, for tests and benchmarks.

pysc2 launches it unchanged (it is what `Versions/Base75689/SC2_x64` runs in a stand-in install, see `__init__.py`):
it honours the launch flags pysc2 passes, listens for pysc2's websocket on `ws://<-listen>:<-port>/sc2api`, and
answers `s2clientprotocol` requests with the JAX mini-games (`reaver_nb.envs.pysc2_env.SC2Env`, the simulation behind
pysc2's interface) as the game: pysc2's own `SC2Env`, its remote controller, its protocol checks and its feature
decoding all run for real against it. It is not the game: what it cannot know is listed in `UNKNOWN`, once.

Requests served (`SERVED`): ping, available_maps, create_game, join_game, game_info, data, observation, action, step,
restart_game, leave_game, save_replay, save_map, quit. Any other request is answered with an error naming it.

Launch flags: `-listen HOST`, `-port N` (required), `-dataDir D` (maps are read from `D/Maps/`), `-tempDir T` (created),
`-dataVersion V` (echoed by ping), `-ipv6`, `-verbose` (every request on stderr); `-eglpath`, `-osmesapath`,
`-headlessNoRender`, `-displayMode` and the window flags are accepted and ignored (it renders nothing). It prints the
real game's startup lines to stdout, as the Linux binary does.

Behaviour switches, from the environment (pysc2 passes its environment to the game):
- `SC2_STANDIN_CRASH_AFTER=N`: die by SIGSEGV on the N-th step request (a game that crashes mid-run);
  `SC2_STANDIN_CRASH_TOKEN=PATH` makes only the instance that first creates PATH do so.
- `SC2_STANDIN_LOG=PATH`: append one line per request (its kind and the seconds the stand-in took) to PATH.
- `SC2_STANDIN_CACHE=DIR`: JAX's persistent compilation cache (default `<dataDir>/Cache/jax`), so that a fleet of
  stand-ins compiles each map once; compilation is serialised by a lock file there.
The launcher script (not this module) dies with signal 11 when a tcmalloc is in `LD_PRELOAD`, as the game does on Colab.
"""
from __future__ import annotations
import argparse, os, signal, sys, time, traceback
from pathlib import Path

UNKNOWN = {   # what the real game sends that the stand-in cannot know, and what pysc2 receives instead
    'feature layers the simulation refuses on a map (unit_density_aa; the alerts of fights)':
        "sent with size 0, which pysc2 reads as zeros, as it does a layer an older game version lacks",
    'bits per pixel of each feature layer': "the smallest of 1, 8, 16, 32 bits that holds pysc2's scale of the layer",
    'the build progress the UI gives a finished unit': 'sent as 0',
    'raw data (units, effects, map state) for interfaces that ask for raw': "sent empty, with the camera's position",
    'score details (by category, by vital), alerts, chat, upgrades': 'sent empty or 0',
    "action results: the game's refusal codes for orders it does not carry out": 'every action is answered Success',
    'several actions in one game loop': 'the first feature-layer action of a step is carried out, the others dropped',
    "the result of a finished mini-game (the map's script decides)": 'reported as a Tie for player 1',
    'static data (abilities, unit types, upgrades, buffs)': 'RequestData is answered with empty lists',
    'replays': 'save_replay returns no bytes (pysc2 writes an empty file)',
    "start_raw's pathing, placement and height grids, start locations": 'not sent; map_size and playable area are',
    'rgb rendering, realtime, disable_fog, multiplayer, battle.net maps, maps other than the seven mini-games':
        'refused with the protocol error the game uses for an unsupported request',
}
SERVED = ('ping', 'available_maps', 'create_game', 'join_game', 'game_info', 'data', 'observation', 'action', 'step',
          'restart_game', 'leave_game', 'save_replay', 'save_map', 'quit')
BUILD, GAME_VERSION = 75689, '4.10.0'             # Versions/Base75689: the last Linux build, as pysc2 4.0.0 knows it
DATA_VERSION = 'B89B5D6FA7CBF6452E721311BFBC6CB2'  # pysc2's run_configs/lib.py, version 4.10.0
PLAYER_ID = 1
MAP_MARK = b'reaver_nb StarCraft II stand-in map'   # how the stand-in's map files begin (__init__.map_file)


def parse_flags(argv):
    "The game's command line as pysc2 builds it (`sc_process.StarcraftProcess`)."
    p = argparse.ArgumentParser(prog='SC2_x64', prefix_chars='-', allow_abbrev=False, add_help=False)
    p.add_argument('-listen', default='127.0.0.1')
    p.add_argument('-port', type=int, required=True)
    p.add_argument('-dataDir', default='')
    p.add_argument('-tempDir', default='')
    p.add_argument('-dataVersion', default=None)
    for flag in ('-ipv6', '-verbose', '-verboseMP', '-headlessNoRender'): p.add_argument(flag, action='store_true')
    for flag in ('-eglpath', '-osmesapath', '-displayMode', '-windowwidth', '-windowheight', '-windowx', '-windowy'):
        p.add_argument(flag)
    args, unknown = p.parse_known_args(argv)
    if unknown: print(f"Ignoring unknown command line options: {' '.join(unknown)}", file=sys.stderr, flush=True)
    return args


class Refused(Exception):
    "A request the game answers with an error: `field` is the response's error enum value (None: Response.error)."
    def __init__(self, message, field=None): super().__init__(message); self.field = field


class Game:
    "One game process: the protocol's state machine over one simulated game (a `reaver_nb.envs.pysc2_env.SC2Env`)."
    def __init__(self, flags):
        from reaver_nb.sc2.compat import import_pysc2
        import_pysc2()
        from s2clientprotocol import sc2api_pb2, common_pb2, error_pb2, score_pb2
        self.sc, self.common, self.error, self.score = sc2api_pb2, common_pb2, error_pb2, score_pb2
        self.flags, self.status = flags, sc2api_pb2.launched
        self.env = self.timestep = None
        self.map_path = self.map_name = self.seed = self.options = None
        self.race = common_pb2.Terran
        self.pending, self.executed, self.steps = [], [], 0
        self.crash_after = int(os.environ.get('SC2_STANDIN_CRASH_AFTER', '0') or 0)
        self.log = os.environ.get('SC2_STANDIN_LOG')

    # -- the protocol ------------------------------------------------------------------------------------------------
    def handle(self, data: bytes) -> tuple[bytes, bool]:
        "One request's bytes -> the response's bytes, and whether the game quits after sending it."
        t0 = time.perf_counter()
        req = self.sc.Request.FromString(data)
        kind = req.WhichOneof('request')
        res = self.sc.Response()
        if req.HasField('id'): res.id = req.id
        if kind is None: res.error.append('Empty request')
        elif kind not in SERVED: res.error.append(f"The StarCraft II stand-in does not serve {kind} requests")
        else:
            out = getattr(res, kind)
            out.SetInParent()
            try: getattr(self, kind)(getattr(req, kind), out)
            except Refused as e:
                if e.field is None or not hasattr(out, 'error'): res.error.append(str(e))
                else:
                    out.error = e.field
                    if hasattr(out, 'error_details'): out.error_details = str(e)
            except Exception as e:   # the stand-in's own failure: pysc2 raises it as a ProtocolError, the game's log has it
                traceback.print_exc()
                res.error.append(f"StarCraft II stand-in error in {kind}: {type(e).__name__}: {e}")
        res.status = self.status
        if self.flags.verbose:
            print(f"stand-in: {kind} -> {self.sc.Status.Name(self.status)}", file=sys.stderr, flush=True)
        if self.log:
            with open(self.log, 'a') as f: f.write(f"{kind} {time.perf_counter() - t0:.6f}\n")
        return res.SerializeToString(), kind == 'quit'

    def _need(self, *states):
        if self.status not in states:
            raise Refused(f"Game is in state {self.sc.Status.Name(self.status)}, which does not take this request")

    def ping(self, req, out):
        out.game_version, out.data_build, out.base_build = GAME_VERSION, BUILD, BUILD
        out.data_version = self.flags.dataVersion or DATA_VERSION

    def available_maps(self, req, out):
        root = Path(self.flags.dataDir) / 'Maps'
        out.local_map_paths.extend(sorted(str(p.relative_to(root)) for p in root.rglob('*.SC2Map')))

    def create_game(self, req, out):
        from reaver_nb.envs.sim.maps import MINIGAMES
        E = self.sc.ResponseCreateGame
        self._need(self.sc.launched, self.sc.ended, self.sc.in_game)
        if req.HasField('battlenet_map_name'): raise Refused('Battle.net maps are not served by the stand-in', E.InvalidMapName)
        if not req.HasField('local_map'): raise Refused('No map given', E.MissingMap)
        path, data = req.local_map.map_path, req.local_map.map_data
        if not data:
            full = Path(path) if os.path.isabs(path) else Path(self.flags.dataDir) / 'Maps' / path
            if not full.is_file(): raise Refused(f'Map file not found: {path}', E.InvalidMapPath)
            data = full.read_bytes()
        if not (data.startswith(MAP_MARK) or data[:3] == b'MPQ'):   # the stand-in's maps, or real ones (MPQ archives)
            raise Refused(f'{path} is not a map: the file is damaged', E.InvalidMapData)
        name = Path(path).stem
        if name not in MINIGAMES:
            raise Refused(f"{path}: the stand-in plays the seven mini-games ({', '.join(MINIGAMES)})", E.InvalidMapData)
        players = list(req.player_setup)
        if not players: raise Refused('No players', E.MissingPlayerSetup)
        if len(players) != 1 or players[0].type != self.sc.Participant:
            raise Refused('The mini-games are single-player maps: one Participant', E.MultiplayerUnsupported)
        if req.realtime or req.disable_fog:
            raise Refused('realtime and disable_fog are not served by the stand-in', E.InvalidPlayerSetup)
        self.map_path, self.map_name = path, name
        self.seed = req.random_seed if req.HasField('random_seed') else None
        self.status = self.sc.init_game

    def join_game(self, req, out):
        E = self.sc.ResponseJoinGame
        self._need(self.sc.init_game)
        if not req.HasField('options'): raise Refused('No interface options', E.MissingOptions)
        o = req.options
        if o.HasField('render'): raise Refused('The stand-in renders no rgb observations', E.FeatureUnsupported)
        if not o.HasField('feature_layer'): raise Refused('The stand-in serves feature layers only', E.FeatureUnsupported)
        print('Requesting to join a single player game', flush=True)
        try: self._start(req)
        except ValueError as e: raise Refused(str(e), E.FeatureUnsupported)
        self.options = o
        self.status = self.sc.in_game
        out.player_id = PLAYER_ID
        print('Game has started.', flush=True)

    def _start(self, req):
        "Build the simulated game for the join's interface options and start its first episode (compiled once)."
        from reaver_nb.envs import pysc2_env
        fl = req.options.feature_layer
        dims = pysc2_env.Dimensions(screen=(fl.resolution.x, fl.resolution.y),
                                    minimap=(fl.minimap_resolution.x, fl.minimap_resolution.y))
        aif = pysc2_env.AgentInterfaceFormat(
            feature_dimensions=dims, camera_width_world_units=fl.width or None,
            crop_to_playable_area=fl.crop_to_playable_area, allow_cheating_layers=fl.allow_cheating_layers,
            use_feature_units=req.options.raw)
        race = pysc2_env.Race(req.race) if req.race else pysc2_env.Race.random
        self.race = req.race or self.common.Random
        self.env = pysc2_env.SC2Env(map_name=self.map_name, players=[pysc2_env.Agent(race)],
                                    agent_interface_format=aif, random_seed=self.seed, ensure_available_actions=False)
        with _compile_lock(self.flags.dataDir):   # both programs, so that a fleet of stand-ins compiles each once
            self.timestep = self.env.reset()[0]
            import jax, numpy as np
            p = self.env._program
            _, step = p.compiled()
            jax.block_until_ready(step(self.env._key, self.env._game_state, np.zeros(len(p.game.act_spec), np.int32),
                                       np.zeros(3, np.int32)))   # a pure function: the game's state is not changed
        self.pending, self.executed = [], []

    def game_info(self, req, out):
        from reaver_nb.envs.pysc2_env import MAP_SIZE
        self._need(self.sc.in_game, self.sc.ended)
        out.map_name, out.local_map_path = self.map_name, self.map_path
        out.player_info.add(player_id=PLAYER_ID, type=self.sc.Participant, race_requested=self.race,
                            race_actual=self.common.Terran)
        out.start_raw.map_size.x, out.start_raw.map_size.y = MAP_SIZE.x, MAP_SIZE.y
        out.start_raw.playable_area.p1.x, out.start_raw.playable_area.p1.y = MAP_SIZE.x, MAP_SIZE.y
        out.options.CopyFrom(self.options)

    def data(self, req, out): self._need(self.sc.in_game, self.sc.ended)

    def action(self, req, out):
        self._need(self.sc.in_game)
        self.pending.extend(req.actions)
        out.result.extend([self.error.Success] * len(req.actions))

    def step(self, req, out):
        self._need(self.sc.in_game)
        self.steps += 1
        if self.crash_after and self.steps >= self.crash_after and _crash_token():
            sys.stdout.flush(); os.kill(os.getpid(), signal.SIGSEGV)
        from pysc2.lib import actions
        spatial = [a for a in self.pending if a.HasField('action_feature_layer') or a.HasField('action_ui')]
        call = self.env._features.reverse_action(spatial[0]) if spatial else actions.FUNCTIONS.no_op()
        carried_out = int(call.function) in self.env._available   # what was offered at the last observation
        self.timestep = self.env.step([call], step_mul=req.count or 1)[0]
        self.executed = spatial[:1] if carried_out and int(call.function) else []
        self.pending = []
        if self.timestep.last(): self.status = self.sc.ended
        out.simulation_loop = int(self.timestep.observation['game_loop'][0])

    def observation(self, req, out):
        self._need(self.sc.in_game, self.sc.ended)
        if self.timestep is None: raise Refused('No game')
        out.actions.extend(self.executed)
        self.encode(self.timestep.observation, out.observation)
        if self.status == self.sc.ended: out.player_result.add(player_id=PLAYER_ID, result=self.sc.Tie)

    def restart_game(self, req, out):
        self._need(self.sc.ended, self.sc.in_game)
        self.timestep = self.env.reset()[0]
        self.pending, self.executed, self.status = [], [], self.sc.in_game

    def leave_game(self, req, out):
        self._need(self.sc.in_game, self.sc.ended)
        self.env = self.timestep = None
        self.status = self.sc.launched

    def save_replay(self, req, out): self._need(self.sc.in_game, self.sc.ended)
    def save_map(self, req, out): self._need(self.sc.launched, self.sc.init_game)
    def quit(self, req, out): self.status = self.sc.quit

    # -- observations ------------------------------------------------------------------------------------------------
    def encode(self, o, ob):
        "pysc2's observation dict (the simulation's) as the game's `Observation` message."
        import numpy as np
        from pysc2.lib import features, actions
        ob.game_loop = int(o['game_loop'][0])
        for name, v in zip(features.Player._member_names_, np.asarray(o['player'])): setattr(ob.player_common, name, int(v))
        ob.score.score_type = self.score.Score.Curriculum
        ob.score.score = int(np.asarray(o['score_cumulative'])[0])
        refused = self.env._program.game.refused_layers
        for group, names, layers, out in (
                ('screen', features.SCREEN_FEATURES, o['feature_screen'], ob.feature_layer_data.renders),
                ('minimap', features.MINIMAP_FEATURES, o['feature_minimap'], ob.feature_layer_data.minimap_renders)):
            values = np.asarray(layers).view(np.ndarray)
            for i, f in enumerate(names):
                if f'{group}/{f.name}' not in refused: image(getattr(out, f.name), values[i], f.scale)
        # what pysc2 offers is computed from the abilities and the UI: one ability per (ability, needs a point)
        offered = set(int(i) for i in o['available_actions'])
        seen = set()
        for fid in sorted(offered):
            fn = actions.FUNCTIONS[fid]
            if not fn.ability_id: continue
            point = fn.function_type in (actions.cmd_screen, actions.cmd_minimap)
            if (fn.ability_id, point) not in seen:
                seen.add((fn.ability_id, point))
                ob.abilities.add(ability_id=fn.ability_id, requires_point=point)
        ui = ob.ui_data
        single, multi = np.asarray(o['single_select']).view(np.ndarray), np.asarray(o['multi_select']).view(np.ndarray)
        if len(single): unit_info(ui.single.unit, single[0])
        elif len(multi):
            for row in multi: unit_info(ui.multi.units.add(), row)
        for i, (leader, count) in enumerate(np.asarray(o['control_groups'])):
            if count: ui.groups.add(control_group_index=i, leader_unit_type=int(leader), count=int(count))
        if self.options.raw:   # the camera's centre in world units (x, y up); minimap rows run down
            from reaver_nb.envs.sim.engine import CAMERA_ORIGIN, MAP_UNITS, SCREEN_UNITS
            s = self.env._game_state
            cx, row = CAMERA_ORIGIN + (0 if s.camera is None else np.asarray(s.camera)) + SCREEN_UNITS / 2
            ob.raw_data.player.camera.x, ob.raw_data.player.camera.y = float(cx), float(MAP_UNITS - row)


def unit_info(u, row):
    "A `UnitLayer` row (unit_type, player_relative, health, shields, energy, transport_slots_taken, build_progress)."
    u.unit_type, u.player_relative, u.health, u.shields, u.energy, u.transport_slots_taken = (int(x) for x in row[:6])
    u.build_progress = float(row[6]) / 100


def image(img, values, scale: int):
    "Fill an `ImageData` with one layer, in the fewest bits per pixel that hold pysc2's `scale` of it."
    import numpy as np
    bits = next(b for b in (1, 8, 16, 32) if scale <= 2 ** b or b == 32)
    v = np.asarray(values)
    if v.size and (v.min() < 0 or v.max() >= 2 ** min(bits, 31)):
        raise ValueError(f"a layer value outside {bits} bits: {v.min()}..{v.max()}")
    img.bits_per_pixel = bits
    img.size.x, img.size.y = int(v.shape[1]), int(v.shape[0])
    img.data = (np.packbits(v.astype(np.uint8).ravel()) if bits == 1 else
                v.astype({8: np.uint8, 16: np.uint16, 32: np.int32}[bits]).ravel()).tobytes()


class _compile_lock:
    "One stand-in compiles a map's program at a time; the others then load it from JAX's persistent cache."
    def __init__(self, data_dir):
        folder = Path(os.environ.get('SC2_STANDIN_CACHE') or Path(data_dir or '.') / 'Cache' / 'jax')
        folder.mkdir(parents=True, exist_ok=True)
        import jax, filelock
        jax.config.update('jax_compilation_cache_dir', str(folder))
        jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.)
        self.lock = filelock.FileLock(str(folder / 'compile.lock'))
    def __enter__(self): self.lock.acquire()
    def __exit__(self, *exc): self.lock.release()


def _crash_token() -> bool:
    "Whether this instance is the one to crash (always, unless SC2_STANDIN_CRASH_TOKEN names a file another made)."
    token = os.environ.get('SC2_STANDIN_CRASH_TOKEN')
    if not token: return True
    try: os.close(os.open(token, os.O_CREAT | os.O_EXCL | os.O_WRONLY)); return True
    except FileExistsError: return False


def serve(flags):
    "Listen for pysc2's websocket, one connection at a time, until a quit request or the connection is lost."
    from websockets.sync.server import serve as ws_serve
    from websockets.http11 import Response
    from websockets.datastructures import Headers
    from websockets.exceptions import ConnectionClosed
    game = Game(flags)
    host = flags.listen.strip('[]')
    done = []

    def process_request(connection, request):
        if request.path != '/sc2api':
            return Response(404, 'Not Found', Headers([('Content-Length', '0')]), b'')

    def handler(connection):
        try:
            quitting = False
            while True:   # pysc2 (websocket-client) sends its binary protobufs in text frames: take them undecoded
                try: message = connection.recv(timeout=5 if quitting else None, decode=False)
                except (ConnectionClosed, TimeoutError): break   # after a quit, pysc2 closes the connection itself
                reply, quit_ = game.handle(message)
                connection.send(reply)
                quitting = quitting or quit_
        finally:
            done.append(True)
            server.shutdown()

    with ws_serve(handler, host, flags.port, process_request=process_request, max_size=2 ** 26,
                  compression=None, ping_interval=None) as server:
        print(f"Listening on: {host}:{flags.port}", flush=True)
        print('Startup Phase 3 complete. Ready for commands.', flush=True)
        server.serve_forever()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    flags = parse_flags(argv)
    # the real binary's first lines (4.10 on Linux), so that a user's log shows what the game's would
    print(f'Version: B{BUILD} (SC2.4.10)\nBuild: Aug 12 2019 17:16:57\nCommand Line: \'"{sys.argv[0]}" '
          f"{' '.join(argv)}'\nStarting up...\nStartup Phase 1 complete\nStartup Phase 2 complete\n"
          'Creating stub renderer...', flush=True)
    if flags.tempDir: os.makedirs(flags.tempDir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))   # pysc2 terminates the game it is done with
    serve(flags)


if __name__ == '__main__':
    main()
