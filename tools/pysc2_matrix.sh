#!/usr/bin/env bash
# pysc2 4.0.0 under many Pythons x protobufs: for each pair, a fresh venv with `pysc2==4.0.0 protobuf==X` and this
# package (no other deps), then tools/pysc2_check.py: import through reaver_nb.sc2.compat, run the mock game, round-trip
# a protocol message. Prints one line per pair and a summary. Usage:
#   bash tools/pysc2_matrix.sh                       # the default matrix below
#   PYTHONS="python3.13" PROTOBUFS="5.29.6" bash tools/pysc2_matrix.sh
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHONS=${PYTHONS:-"$(ls -d "$(pyenv root 2>/dev/null || echo /root/.pyenv)"/versions/3.1[0-3]*/bin/python 2>/dev/null | tr '\n' ' ')"}
PROTOBUFS=${PROTOBUFS:-"3.20.3 4.25.8 5.29.6 6.33.6 7.36.2"}
WORK=${WORK:-$(mktemp -d)}
pass=0; fail=0
for py in $PYTHONS; do
  for pb in $PROTOBUFS; do
    v="$WORK/venv-$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')-$pb"
    $py -m venv "$v" >/dev/null 2>&1
    if ! "$v/bin/pip" install -q --disable-pip-version-check "pysc2==4.0.0" "protobuf==$pb" >"$v.log" 2>&1; then
      echo "SKIP  $($py --version 2>&1) protobuf $pb: does not install ($(tail -1 "$v.log" | cut -c1-120))"; continue
    fi
    "$v/bin/pip" install -q --disable-pip-version-check --no-deps -e . >>"$v.log" 2>&1
    if out=$("$v/bin/python" tools/pysc2_check.py 2>&1); then
      echo "PASS  $out"; pass=$((pass+1))
    else
      echo "FAIL  $($py --version 2>&1) protobuf $pb: $(echo "$out" | tail -3 | tr '\n' ' ')"; fail=$((fail+1))
    fi
  done
done
echo "pysc2 matrix: $pass passed, $fail failed (venvs in $WORK)"
[ "$fail" -eq 0 ]
