#!/usr/bin/env bash
# Install the headless StarCraft II Linux client (and DeepMind's mini-game maps) for reaver_nb.
#
# Usage: setup_scripts/install_sc2.sh --accept-eula [--path DIR] [--version 4.10] [--ladder Ladder2017Season1] ...
#   --accept-eula accepts Blizzard's AI and Machine Learning licence:
#   https://blzdistsc2-a.akamaihd.net/AI_AND_MACHINE_LEARNING_LICENSE.html
#   The game goes to $SC2PATH, else ~/StarCraftII. Run with --help for every option.
# Re-running resumes an interrupted download and does nothing once everything is installed.
set -euo pipefail
PYTHON="${PYTHON:-python}"
"$PYTHON" -c 'import reaver_nb' 2>/dev/null || "$PYTHON" -m pip install -q reaver_nb
exec "$PYTHON" -m reaver_nb.sc2.installer "$@"
