#!/usr/bin/env bash
# The measurements behind docs/libraries.md: each hand-written piece next to the library that could replace it.
#
#   . <the dev venv>/bin/activate     # reaver_nb installed editable, with the [dev] extra
#   bash tools/library_checks/run.sh SCRATCH [part ...]
#
# Run from the checkout. SCRATCH is a folder outside the checkout for the throwaway venvs (deleted at the end unless
# KEEP=1). Parts: bootstrap pooch tables uipoll readme pysc2e (default: all). The scratch venvs see the dev venv's
# packages after their own (a .pth file), so only the packages under test are installed in them. Needs the package
# index; Colab's pins are read from colab/constraints.txt (COLAB_CONSTRAINTS overrides).
set -uo pipefail
SCRATCH=${1:?usage: run.sh SCRATCH [part ...]}; shift
PARTS=${*:-bootstrap pooch tables uipoll readme pysc2e}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tools/library_checks"
COLAB=${COLAB_CONSTRAINTS:-$ROOT/colab/constraints.txt}
DEV_PY=$(command -v python)
DEV_SITE=$("$DEV_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$SCRATCH"; SCRATCH=$(cd "$SCRATCH" && pwd)
cd "$ROOT"

venv() {   # venv NAME PACKAGES...: a scratch venv that sees the dev venv's packages after its own
  local v="$SCRATCH/$1"; shift
  rm -rf "$v"; "$DEV_PY" -m venv "$v"
  "$v/bin/pip" install -q "$@" 2>&1 | grep -v '^WARNING: Location' || true
  local site; site=$("$v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "import site; site.addsitedir('$DEV_SITE')" > "$site/zz_dev_venv.pth"
}
has() { [[ " $PARTS " == *" $1 "* ]]; }

if has bootstrap || has pooch || has tables; then
  venv libs rliable==1.2.0 pandas==2.2.3 arch==7.2.0 pooch==1.9.0 tabulate==0.9.0
fi
if has bootstrap; then
  echo "== (a) bootstrap: ours vs rliable vs scipy.stats.bootstrap"
  "$SCRATCH/libs/bin/python" -W ignore "$HERE/bootstrap_vs_rliable.py" 2000
  "$SCRATCH/libs/bin/python" -W ignore "$HERE/bootstrap_vs_rliable.py" 20000
  echo "-- rliable's bootstrap as a fresh install resolves it (pandas 3):"
  "$DEV_PY" -c 'import pandas, arch; print("pandas", pandas.__version__, "arch", arch.__version__)
from rliable import library' 2>&1 | tail -2
  echo "-- rliable on Colab's pins (what it adds):"
  pip install --dry-run --ignore-installed -c "$COLAB" rliable==1.2.0 2>&1 | grep '^Would install'
fi
if has pooch; then
  echo "== (b) an interrupted download, then the same call: ours vs pooch"
  "$SCRATCH/libs/bin/python" -W ignore "$HERE/download_vs_pooch.py" 2>&1 | grep -v -E '^(Downloading|SHA256|Use this|Unzipping)'
fi
if has tables; then
  echo "== (c) text tables: ours vs tabulate vs rich"
  "$SCRATCH/libs/bin/python" "$HERE/tables_vs.py" | grep -E '^--- |^python -c'
fi
if has uipoll; then
  echo "== (d) a Stop click while the cell runs: jupyter_ui_poll vs the dashboard's reader"
  echo "-- this venv:"; "$DEV_PY" "$HERE/ui_poll.py" 2>&1 | grep RESULT
  venv ipk6 -c "$COLAB" ipykernel ipywidgets jupyter-ui-poll jupyter_client
  echo "-- Colab's ipykernel:"; "$SCRATCH/ipk6/bin/python" "$HERE/ui_poll.py" jupyter_ui_poll 2>&1 | grep RESULT
fi
if has readme; then
  echo "== (e) nbdev-readme and PyPI's quarto-cli"
  (cd "$SCRATCH" && pip wheel --no-deps --no-cache-dir -w "$SCRATCH/wheels" quarto-cli 2>&1 \
     | grep -E 'Downloading|Error downloading|Failed to build' | head -4)
  rm -rf "$SCRATCH/readme" && mkdir -p "$SCRATCH/readme/reaver_nb" && cp -r nbs pyproject.toml "$SCRATCH/readme/"
  (cd "$SCRATCH/readme" && python -c 'from nbdev.quarto import refresh_quarto_yml; refresh_quarto_yml()' \
     && timeout 120 nbdev-readme < /dev/null 2>&1 | tail -1; echo "nbdev-readme exit status ${PIPESTATUS[0]}")
fi
if has pysc2e; then
  echo "== (f) pysc2-evolved"
  venv pysc2e pysc2-evolved==1.1.1
  E="$SCRATCH/pysc2e/bin/python"
  "$E" -c 'import pysc2_evolved.env.sc2_env, pysc2_evolved.lib.actions, google.protobuf as g
from google.protobuf.internal import api_implementation as a; print("imports, protobuf", g.__version__, a.Type())' 2>&1 | tail -1
  echo "-- reaver_nb's pysc2 tests against it, pysc2 aliased to pysc2_evolved, our patches off:"
  PYSC2E_NO_PATCHES=1 PYTHONPATH="$HERE" timeout 1200 "$E" -m pytest -q -p no:cacheprovider -p pysc2_alias \
    tests/test_pysc2_compat.py tests/test_sc2_env.py tests/test_pysc2_env.py tests/test_sc2_launch.py 2>&1 \
    | grep -E '^FAILED|^E +AttributeError|passed|failed' | cut -c1-160
  echo "-- its own no-game tests of the same modules, under pytest:"
  P=$("$E" -c 'import pysc2_evolved, os; print(os.path.dirname(pysc2_evolved.__file__))')
  "$E" -m pytest -q -p no:cacheprovider "$P/env/mock_sc2_env_test.py" "$P/lib/features_test.py" \
    "$P/lib/named_array_test.py" "$P/lib/point_test.py" 2>&1 | tail -1
  echo "-- under Colab's protobuf:"
  "$SCRATCH/pysc2e/bin/pip" install -q "$(grep '^protobuf==' "$COLAB")" 2>&1 | grep -v -E '^WARNING: Location|requires protobuf|resolver' || true
  "$E" -c 'import pysc2_evolved.env.sc2_env' 2>&1 | tail -1 | cut -c1-200
  echo "-- pip install --dry-run -c colab-constraints.txt (each conflict, then without that pin):"
  cp "$COLAB" "$SCRATCH/colab.txt"
  for _ in 1 2 3 4 5 6; do
    out=$(pip install --dry-run --ignore-installed -c "$SCRATCH/colab.txt" pysc2-evolved==1.1.1 2>&1)
    pin=$(grep -o 'The user requested (constraint) .*' <<<"$out" | head -1 | sed 's/.*constraint) //')
    [ -z "$pin" ] && { grep -q '^Would install' <<<"$out" && echo "resolves once those pins are dropped"; break; }
    echo "$(grep 'depends on' <<<"$out" | head -1 | sed 's/^ *//')  <->  Colab's $pin"
    grep -v -i "^${pin%%==*}==" "$SCRATCH/colab.txt" > "$SCRATCH/colab2.txt"; mv "$SCRATCH/colab2.txt" "$SCRATCH/colab.txt"
  done
  echo "-- pysc2 4.0.0 (ours) on Colab's pins:"
  pip install --dry-run --ignore-installed -c "$COLAB" pysc2==4.0.0 2>&1 | grep -c '^Would install' | sed 's/^1$/resolves/'
fi
[ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH/libs" "$SCRATCH/ipk6" "$SCRATCH/pysc2e" "$SCRATCH/readme" "$SCRATCH/wheels" "$SCRATCH/colab.txt"
