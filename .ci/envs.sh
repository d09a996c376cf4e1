#!/usr/bin/env bash
# Framework environments the tests and shipped scenarios use: built once from PyPI into
# $CHAOS_ENV_DIR (default ~/.cache/chaos/envs) with chaos's own code (chaos.envs.python_for), so
# a run or a test never waits on pip. Idempotent: a ready environment is reused.
#   framework          -> its default pinned release (chaos/targets/__init__.py), one env each:
#                         their dependencies may conflict with LangGraph's and with each other's
#   framework:version  -> that release (the version-axis tests)
# Usage: bash .ci/envs.sh [spec ...]   (default: every spec below)
set -euo pipefail
cd "$(dirname "$0")/.."
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=(langgraph:1.0.10 pydantic_graph llamaindex autogen crewai dbos)
fi
for spec in "${specs[@]}"; do
  framework=${spec%%:*}
  version=""
  [ "$spec" != "$framework" ] && version=${spec#*:}
  start=$(date +%s)
  python=$(PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" python -c \
    "import sys; from chaos.envs import python_for; print(python_for(sys.argv[1], sys.argv[2] or None))" "$framework" "$version")
  echo "env $spec: $python ($(( $(date +%s) - start )) s)"
done
