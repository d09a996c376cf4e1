#!/usr/bin/env bash
# Install (if needed) and start a local PostgreSQL for chaos's shared ledger and the LangGraph
# postgres backend, then create role + database `chaos`. Idempotent; prints the DSN on stdout.
#
# Works as root on Debian bookworm without systemd (CI, containers): uses pg_ctlcluster.
# Env: CHAOS_PG_PASSWORD (default chaos), CHAOS_PG_PORT (default: the cluster's port).
# The DSN convention for everything else is CHAOS_PG_DSN, e.g.
#   export CHAOS_PG_DSN="$(scripts/postgres.sh | tail -1)"
set -euo pipefail

PASSWORD="${CHAOS_PG_PASSWORD:-chaos}"
log() { echo "postgres.sh: $*" >&2; }
die() { echo "postgres.sh: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || die "not root and no sudo: run as root or install PostgreSQL yourself"
else
  SUDO=
fi
if [ -n "$SUDO" ]; then ASPG="sudo -u postgres"; else ASPG="runuser -u postgres --"; fi

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  log "installing postgresql from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq postgresql >&2 || die "apt-get install postgresql failed: check the apt sources"
fi

# The newest installed cluster; create one if the package did not (e.g. policy-rc.d / no cluster).
read -r VER CLUSTER PORT STATUS _ < <(pg_lsclusters -h | sort -V | tail -1 || true) || true
if [ -z "${VER:-}" ]; then
  VER="$(ls /usr/lib/postgresql | sort -V | tail -1)"
  [ -n "$VER" ] || die "no PostgreSQL server version found under /usr/lib/postgresql"
  log "creating cluster $VER/main"
  $SUDO pg_createcluster "$VER" main >&2
  read -r VER CLUSTER PORT STATUS _ < <(pg_lsclusters -h | sort -V | tail -1)
fi

# A server killed with SIGKILL (a stopped session, a crashed machine) leaves lock files naming a pid
# that is gone or a zombie; PostgreSQL refuses to start while such a pid still exists. Remove the
# locks only when their pid is not a live postmaster.
clear_stale_locks() {
  local lock pid state
  for lock in "/var/run/postgresql/.s.PGSQL.$PORT.lock" "/var/lib/postgresql/$VER/$CLUSTER/postmaster.pid"; do
    [ -f "$lock" ] || continue
    pid="$(head -n 1 "$lock" 2>/dev/null || true)"
    state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)"
    if [ -z "$state" ] || [ "$state" = Z ]; then
      if [ -z "$state" ]; then state="gone"; else state="a zombie"; fi
      log "removing stale lock $lock (pid $pid is $state)"
      $SUDO rm -f "$lock"
    fi
  done
}

if [ "$STATUS" != "online" ]; then
  log "starting cluster $VER/$CLUSTER on port $PORT"
  clear_stale_locks
  $SUDO pg_ctlcluster "$VER" "$CLUSTER" start >&2 || die "pg_ctlcluster $VER $CLUSTER start failed: see /var/log/postgresql/postgresql-$VER-$CLUSTER.log"
fi

psql_su() { $ASPG psql -v ON_ERROR_STOP=1 -qAt -p "$PORT" "$@"; }
# the server accepts connections once pg_ctlcluster returns (it waits), but check loudly
psql_su -c "select 1" >/dev/null || die "PostgreSQL $VER/$CLUSTER on port $PORT does not accept connections"

if [ "$(psql_su -c "select 1 from pg_roles where rolname='chaos'")" != 1 ]; then
  VERB=create
else
  VERB=alter
fi
# the password goes through stdin, never argv (no `ps` leak)
printf "%s role chaos login password '%s'\n" "$VERB" "${PASSWORD//\'/\'\'}" | psql_su -f -
if [ "$(psql_su -c "select 1 from pg_database where datname='chaos'")" != 1 ]; then
  psql_su -c "create database chaos owner chaos"
fi

log "ready: PostgreSQL $VER/$CLUSTER, role and database chaos (password not shown)"
echo "postgresql://chaos:${PASSWORD}@127.0.0.1:${PORT}/chaos"
