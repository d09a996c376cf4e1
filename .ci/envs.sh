#!/usr/bin/env bash
# Build the per-framework racer environments (one venv each, pinned in chaos/targets/__init__.py)
# before the tests run, so no test waits on pip. Idempotent: chaos.envs reuses a ready env.
# Usage: bash .ci/envs.sh [framework ...]   (default: every framework that runs in its own env)
set -euo pipefail
cd "$(dirname "$0")/.."
frameworks=("$@")
if [ ${#frameworks[@]} -eq 0 ]; then
  frameworks=(pydantic_graph llamaindex autogen crewai)
fi
for fw in "${frameworks[@]}"; do
  start=$(date +%s)
  python=$(PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" python -c "from chaos.envs import python_for; print(python_for('$fw'))")
  echo "env $fw: $python ($(( $(date +%s) - start )) s)"
done
