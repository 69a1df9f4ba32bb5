"""Every number the README, the Colab notebooks and the shipped configs state comes from a record
(tools/results.py): the check passes on the repository, and fails on a number typed by hand or a marked value that
disagrees with its record."""
import sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import results as R


def test_the_repository_states_only_recorded_numbers():
    assert R.check(R.load()) == []


def test_a_hand_typed_number_fails_the_check():
    readme = (ROOT / 'README.md').read_text()
    planted = readme.replace('## Results\n', '## Results\n\nThe default scores 24.99 on MoveToBeacon.\n', 1)
    assert R.stray_numbers(readme) == [] and R.stray_numbers(planted) == ['24.99']
    assert R.stray_numbers('took 9 min on a laptop') == ['9 min']
    # settings in code, versions, links and marked values are not stated results
    assert R.stray_numbers('`A2C.entropy_coef = 0.01`, Python 3.10, [x](a/1.5), <!-- record:k.mean -->2.5<!-- /record -->') == []


def test_a_marked_value_that_disagrees_with_its_record_fails_the_check():
    rec = R.load()
    good = R.render('scripted play <!-- record:mtb-scripted.mean --><!-- /record -->', rec)
    assert good == f"scripted play <!-- record:mtb-scripted.mean -->{R.value(rec, 'mtb-scripted.mean')}<!-- /record -->"
    planted = good.replace(R.value(rec, 'mtb-scripted.mean'), '26.50')
    assert R.render(planted, rec) != planted          # what check() reports as stale
