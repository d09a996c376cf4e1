#!/usr/bin/env bash
# CI: a real headless browser for the report tests (tests/kits/browserkit.py): Debian's chromium, and
# the Python packages the HTML/PNG reports need (jinja2, matplotlib; both core dependencies).
# Idempotent and quick when everything is already there. Prints chromium's path (last line).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v chromium >/dev/null 2>&1; then
  echo "browser.sh: installing chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
fi
python -c "import jinja2, matplotlib" 2>/dev/null || {
  echo "browser.sh: installing the report dependencies" >&2
  python -m pip install -q "jinja2>=3.1" "matplotlib>=3.8" >&2
}
chromium --version 2>/dev/null >&2 || true
command -v chromium
