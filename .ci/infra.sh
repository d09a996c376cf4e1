#!/usr/bin/env bash
# CI infrastructure for the "across machines" tests: PostgreSQL (shared ledger + LangGraph
# postgres backend), openssh-server (sshd for the netns SSH test lab), iproute2 (ip netns),
# MariaDB and plain Redis (the server-backed savers: scripts/mariadb.sh, scripts/redis.sh).
# Idempotent and quick when everything is already there. Prints the DSN (last line of stdout);
# exports nothing: the caller does `export CHAOS_PG_DSN="$(.ci/infra.sh | tail -1)"` (and takes
# CHAOS_MYSQL_DSN / CHAOS_REDIS_URL from the last line of those scripts, quick once started).
# Docker is optional: its tests skip with a reason when no engine answers.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
need=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v pg_lsclusters >/dev/null 2>&1 || need+=(postgresql)
# the lazy filesystem (fault: power_loss | torn): fusermount3 and libfuse3 (loaded by mfusepy through ctypes)
command -v fusermount3 >/dev/null 2>&1 || need+=(fuse3)
ldconfig -p 2>/dev/null | grep -q 'libfuse3\.so' || need+=(libfuse3-3)
# the server-backed savers (scripts/mariadb.sh, scripts/redis.sh start them, loopback only)
command -v mariadbd >/dev/null 2>&1 || need+=(mariadb-server)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if [ "${#need[@]}" -gt 0 ]; then
  echo "infra.sh: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # no service is started by package scripts: sshd runs only inside the test lab's namespaces
  apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
python -c "import psycopg, paramiko, docker, mfusepy" 2>/dev/null || {
  echo "infra.sh: installing the postgres/remote extras" >&2
  python -m pip install -q -e "$here[test]" >&2
}
"$here/scripts/mariadb.sh" >/dev/null
"$here/scripts/redis.sh" >/dev/null
"$here/scripts/postgres.sh"
