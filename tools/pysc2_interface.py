"""Write reaver_nb/sc2/pysc2_interface.json: pysc2 4.0.0's function table, argument types and feature-layer scales,
so Specs (and the JAX mini-games) can be built without pysc2. Run again after a pysc2 upgrade; tests compare it."""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reaver_nb.sc2.compat import import_pysc2

def table() -> dict:
    import_pysc2()
    import pysc2
    from pysc2.lib import actions, features
    layers = lambda t: {f.name: [f.type.name.lower(), int(f.scale)] for f in t}
    return dict(
        pysc2_version=getattr(pysc2, '__version__', '4.0.0'),
        functions=[[int(f.id), f.name, [a.name for a in f.args]] for f in actions.FUNCTIONS],
        types={t.name: [int(s) for s in t.sizes] for t in actions.TYPES},
        screen_features=layers(features.SCREEN_FEATURES),
        minimap_features=layers(features.MINIMAP_FEATURES))

if __name__ == '__main__':
    out = Path(__file__).resolve().parents[1] / 'reaver_nb' / 'sc2' / 'pysc2_interface.json'
    t = table()
    out.write_text('{\n' + ',\n'.join(f' {json.dumps(k)}: {json.dumps(v)}' for k, v in t.items()) + '\n}\n')
    print('wrote', out, len(t['functions']), 'functions')
