#!/bin/sh
# A stand-in for StarCraft II's Linux binary ($SC2PATH/Versions/Base75689/SC2_x64), for tests only.
# Like the real game on Colab it segfaults (exit code -11) when a tcmalloc library -- a file named libtcmalloc*.so*,
# in any case -- is in LD_PRELOAD (entries separated by colons or spaces); it only reads the variable, nothing is
# really preloaded. Otherwise it records its arguments and environment next to itself and sleeps, never opening the
# websocket pysc2 waits for (so pysc2 times out and shuts it down).
here=$(dirname "$0")
echo $$ > "$here/pid.txt"   # stays this process's pid through the exec below
for lib in $(printf '%s' "$LD_PRELOAD" | tr ':' ' '); do
  case "$(printf '%s' "${lib##*/}" | tr 'A-Z' 'a-z')" in
    libtcmalloc*.so*) sleep 0.2; kill -s SEGV $$ ;;   # the game loads for a moment before it crashes
  esac
done
printf '%s\n' "$@" > "$here/argv.txt"
env > "$here/env.tmp" && mv "$here/env.tmp" "$here/env.txt"
exec sleep 60
