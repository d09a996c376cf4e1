#!/usr/bin/env bash
# Framework environments the version-axis tests and shipped scenarios use: built once from PyPI
# into $CHAOS_ENV_DIR (default ~/.cache/chaos/envs) with chaos's own cache, so a run never waits
# on pip. Idempotent: a ready environment is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
for spec in langgraph:1.0.10; do
  framework=${spec%%:*}
  version=${spec#*:}
  python -c "import sys; from chaos.envs import python_for; print(python_for(sys.argv[1], sys.argv[2]))" "$framework" "$version"
done
