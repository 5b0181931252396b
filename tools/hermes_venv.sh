#!/bin/sh
# Sets up the shipped Hermes Agent 0.19.0 in a scratch virtualenv OUTSIDE
# the repository, the peer of bench/manager_bench.ts's "vs Hermes 0.19.0"
# group. Its code is only run by the bench, never copied or committed.
#
#   tools/hermes_venv.sh [dir]
#
# dir defaults to $HERMES_VENV, else ${XDG_CACHE_HOME:-$HOME/.cache}/hermes-memory/hermes-venv-0.19.0;
# the bench reads the same variable and default.
set -eu
dir="${1:-${HERMES_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/hermes-memory/hermes-venv-0.19.0}}"
case "$dir" in
  "$(cd "$(dirname "$0")/.." && pwd)"/*) echo "hermes_venv.sh: $dir is inside the repository; pick a directory outside it" >&2; exit 2 ;;
esac
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet "hermes-agent==0.19.0"
"$dir/bin/python" -c "import agent.memory_manager" 
echo "Hermes 0.19.0 ready in $dir; run the bench with HERMES_VENV=$dir"
