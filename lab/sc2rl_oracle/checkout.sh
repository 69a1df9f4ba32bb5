#!/usr/bin/env bash
# Lay out an SC2-RL work tree at the pinned commit, with its ConvLSTM_pytorch submodule, outside this repository.
#
#   bash lab/sc2rl_oracle/checkout.sh DEST [SC2RL_GIT_DIR] [CONVLSTM_GIT_DIR]
#
# SC2RL_GIT_DIR / CONVLSTM_GIT_DIR: bare git directories holding the two repositories, e.g. the mirrors the search
# tool's `fetch` brings (<mirror folder>/nicoladainese96+SC2-RL/repo and .../nicoladainese96+ConvLSTM_pytorch/repo).
# Without them, both are cloned from GitHub (the submodule's recorded URL is SSH; HTTPS is used here).
# The files are exported blob by blob: a mirror may lack its largest blobs (here the thesis PDF and
# Notebooks/Part9_agent_movement.ipynb), which makes `git worktree add`/`checkout` fail; those are listed and skipped.
# DEST/.sc2rl_commit records the commit (real_curves.py and run_judge.py check it).
set -euo pipefail
DEST=${1:?usage: checkout.sh DEST [SC2RL_GIT_DIR] [CONVLSTM_GIT_DIR]}
SC2RL_GIT=${2:-}
CONV_GIT=${3:-}
COMMIT=20eaff007473c74c284263735c2fa96491b642bd          # SC2-RL master, 2020-10-29
CONV_COMMIT=9c85346541c559c73b6d9537ac0b247dc5191342     # ConvLSTM_pytorch, as recorded by that commit

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -z "$SC2RL_GIT" ] || [ ! -d "$SC2RL_GIT" ]; then
  git clone --bare -q https://github.com/nicoladainese96/SC2-RL "$tmp/sc2rl.git"; SC2RL_GIT=$tmp/sc2rl.git
fi
if [ -z "$CONV_GIT" ] || [ ! -d "$CONV_GIT" ]; then
  git clone --bare -q https://github.com/nicoladainese96/ConvLSTM_pytorch "$tmp/conv.git"; CONV_GIT=$tmp/conv.git
fi
[ "$(git --git-dir="$SC2RL_GIT" ls-tree "$COMMIT" ConvLSTM_pytorch | awk '{print $3}')" = "$CONV_COMMIT" ] \
  || { echo "unexpected submodule commit in $COMMIT" >&2; exit 1; }

mkdir -p "$DEST"
missing=0
while IFS=$'\t' read -r meta path; do
  read -r _mode type sha <<<"$meta"
  [ "$type" = blob ] || continue
  mkdir -p "$DEST/$(dirname "$path")"
  if ! git --git-dir="$SC2RL_GIT" cat-file blob "$sha" >"$DEST/$path" 2>/dev/null; then
    rm -f "$DEST/$path"; echo "missing from the mirror (skipped): $path" >&2; missing=$((missing + 1))
  fi
done < <(git --git-dir="$SC2RL_GIT" ls-tree -r "$COMMIT")
mkdir -p "$DEST/ConvLSTM_pytorch"
git --git-dir="$CONV_GIT" archive "$CONV_COMMIT" | tar -x -C "$DEST/ConvLSTM_pytorch"
echo "$COMMIT" >"$DEST/.sc2rl_commit"
echo "SC2-RL $COMMIT (+ ConvLSTM_pytorch $CONV_COMMIT) in $DEST; $missing file(s) missing from the mirror"
