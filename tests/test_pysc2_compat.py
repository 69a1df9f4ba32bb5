"""pysc2 4.0.0's own no-game unit tests pass once `reaver_nb.sc2.compat.import_pysc2()` has fixed the imports (on this
Python and protobuf; tools/pysc2_matrix.sh runs the mock game under Python 3.10-3.13 x protobuf 3.20-7.x)."""
import importlib, unittest
import pytest

pytest.importorskip('pysc2')
from reaver_nb.sc2.compat import import_pysc2, pysc2_status

PYSC2_TESTS = ['pysc2.env.mock_sc2_env_test', 'pysc2.lib.features_test', 'pysc2.lib.named_array_test',
               'pysc2.lib.point_test']  # mock_sc2_env_comparison_test needs the real game


@pytest.mark.parametrize('module', PYSC2_TESTS)
def test_pysc2_unit_tests_pass(module):
    import_pysc2()
    suite = unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(module))
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    assert result.testsRun > 0
    assert result.wasSuccessful(), [str(f[1])[-500:] for f in result.failures + result.errors]


def test_palettes_as_on_python_310():
    "pysc2.lib.colors shuffles its palettes with `random.shuffle(x, lambda: 0.5)`, removed in Python 3.11."
    import_pysc2()
    from pysc2.lib import colors
    palette = colors.shuffled_hue(10)
    assert palette.shape == (10, 3)
    # the fixed shuffle of Python <= 3.10 puts hue 0 first and hue 9 second (see nbs/13_sc2_pysc2.ipynb)
    assert (palette[0] == colors.smooth_hue_palette(10)[0]).all()
    assert (palette[1] == colors.smooth_hue_palette(10)[9]).all()


def test_status_names_what_was_done():
    s = pysc2_status()
    assert s['pysc2'] == '4.0.0' and s['protobuf'] and s['protocol']


def test_shipped_interface_table_matches_pysc2():
    "reaver_nb/sc2/pysc2_interface.json (Specs without pysc2) is pysc2's own table; rerun tools/pysc2_interface.py if not."
    import importlib.util, json
    from pathlib import Path
    spec = importlib.util.spec_from_file_location('pi', Path(__file__).parents[1] / 'tools' / 'pysc2_interface.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    shipped = json.loads((Path(__file__).parents[1] / 'reaver_nb' / 'sc2' / 'pysc2_interface.json').read_text())
    assert mod.table() == shipped
