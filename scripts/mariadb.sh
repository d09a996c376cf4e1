#!/usr/bin/env bash
# Install (if needed) and start a local MariaDB for the LangGraph MySQL saver
# (`langgraph-checkpoint-mysql`, factory `chaos.savers:mysql`), then create user + database `chaos`.
# Idempotent; listens on loopback only; prints the DSN as the last line of stdout.
#   scripts/mariadb.sh        start (the default)
#   scripts/mariadb.sh stop   stop the server (nothing to do when it is not running)
#
# Works as root on Debian bookworm without systemd (CI, containers): Debian's mariadb-server package
# and its SysV script. Env: CHAOS_MYSQL_PASSWORD (default chaos). The user `chaos` may create the
# databases `chaos*` (tests make their own and drop them). The DSN convention is CHAOS_MYSQL_DSN:
#   export CHAOS_MYSQL_DSN="$(scripts/mariadb.sh | tail -1)"
set -euo pipefail

PASSWORD="${CHAOS_MYSQL_PASSWORD:-chaos}"
PORT=3306 # Debian's default; the server is started with --port so that the DSN is true
log() { echo "mariadb.sh: $*" >&2; }
die() { echo "mariadb.sh: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || die "not root and no sudo: run as root or install MariaDB yourself"
else
  SUDO=
fi

alive() { $SUDO mariadb-admin --protocol=socket ping >/dev/null 2>&1; }

if [ "${1:-start}" = stop ]; then
  if command -v mariadb-admin >/dev/null 2>&1 && alive; then
    # shutdown returns once the server has stopped
    $SUDO mariadb-admin --protocol=socket shutdown || die "mariadb-admin shutdown failed"
    log "stopped"
  else
    log "not running"
  fi
  exit 0
fi
[ "${1:-start}" = start ] || die "usage: scripts/mariadb.sh [start|stop]"

if ! command -v mariadbd >/dev/null 2>&1; then
  log "installing mariadb-server from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends mariadb-server >&2 || die "apt-get install mariadb-server failed: check the apt sources"
fi

if ! alive; then
  log "starting MariaDB on 127.0.0.1:$PORT"
  # the SysV script passes its extra arguments to mysqld_safe and waits until the server answers
  $SUDO /etc/init.d/mariadb start --bind-address=127.0.0.1 --port="$PORT" >&2 || die "/etc/init.d/mariadb start failed: see /var/log/syslog or journalctl"
fi
alive || die "MariaDB does not answer on its socket after starting"

bind="$($SUDO mariadb -N -B -e "select @@bind_address, @@port")"
[ "$bind" = "127.0.0.1	$PORT" ] || die "MariaDB runs with bind_address/port '$bind', not 127.0.0.1 $PORT: stop it (scripts/mariadb.sh stop) and run again"

# the password goes through stdin, never argv (no `ps` leak)
pw="${PASSWORD//\\/\\\\}"
pw="${pw//\'/\\\'}"
$SUDO mariadb <<SQL
CREATE USER IF NOT EXISTS 'chaos'@'127.0.0.1' IDENTIFIED BY '$pw';
CREATE USER IF NOT EXISTS 'chaos'@'localhost' IDENTIFIED BY '$pw';
ALTER USER 'chaos'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER 'chaos'@'localhost' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON \`chaos%\`.* TO 'chaos'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`chaos%\`.* TO 'chaos'@'localhost';
CREATE DATABASE IF NOT EXISTS chaos;
SQL

log "ready: MariaDB $($SUDO mariadb -N -B -e 'select version()'), user and database chaos (password not shown)"
echo "mysql://chaos:${PASSWORD}@127.0.0.1:${PORT}/chaos"
