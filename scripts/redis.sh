#!/usr/bin/env bash
# Install (if needed) and start a local plain Redis (Debian's redis-server: no modules, no RedisJSON
# or RediSearch) for the plain-Redis LangGraph saver (`langgraph-checkpoint-plainredis`, factory
# `chaos.savers:plainredis`). Idempotent; listens on loopback only; prints the URL as the last line.
#   scripts/redis.sh        start (the default)
#   scripts/redis.sh stop   stop the server (nothing to do when it is not running)
#
# Works as root on Debian bookworm without systemd (CI, containers): the server runs as user redis
# with Debian's /etc/redis/redis.conf, bound to 127.0.0.1 whatever that file says. Env:
# CHAOS_REDIS_PORT (default 6379). The URL convention is CHAOS_REDIS_URL:
#   export CHAOS_REDIS_URL="$(scripts/redis.sh | tail -1)"
set -euo pipefail

PORT="${CHAOS_REDIS_PORT:-6379}"
log() { echo "redis.sh: $*" >&2; }
die() { echo "redis.sh: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null || die "not root and no sudo: run as root or install Redis yourself"
else
  SUDO=
fi

alive() { [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = PONG ]; }

if [ "${1:-start}" = stop ]; then
  if command -v redis-cli >/dev/null 2>&1 && alive; then
    # SHUTDOWN returns (the connection closes) once the server has saved and exited
    redis-cli -h 127.0.0.1 -p "$PORT" shutdown >/dev/null 2>&1 || true
    alive && die "Redis on 127.0.0.1:$PORT still answers after SHUTDOWN"
    log "stopped"
  else
    log "not running"
  fi
  exit 0
fi
[ "${1:-start}" = start ] || die "usage: scripts/redis.sh [start|stop]"

if ! command -v redis-server >/dev/null 2>&1; then
  log "installing redis-server from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends redis-server >&2 || die "apt-get install redis-server failed: check the apt sources"
fi

if ! alive; then
  log "starting Redis on 127.0.0.1:$PORT"
  $SUDO install -d -m 2775 -o redis -g redis /run/redis
  # the server daemonizes before it listens: wait (capped) until it answers
  if [ -n "$SUDO" ]; then AS="sudo -u redis"; else AS="runuser -u redis --"; fi
  $AS redis-server /etc/redis/redis.conf --bind 127.0.0.1 --port "$PORT" --daemonize yes --supervised no \
    --pidfile "/run/redis/redis-server-$PORT.pid" >&2 || die "redis-server failed to start: see /var/log/redis/redis-server.log"
  for _ in $(seq 1 100); do
    alive && break
    sleep 0.1
  done
fi
alive || die "Redis does not answer on 127.0.0.1:$PORT: see /var/log/redis/redis-server.log"

# a server the package started (Debian's default: "127.0.0.1 -::1") is fine while every address is loopback
bind="$(redis-cli -h 127.0.0.1 -p "$PORT" config get bind | tail -1)"
for addr in $bind; do
  case "${addr#-}" in
    127.* | ::1 | localhost) ;;
    *) die "Redis on port $PORT binds '$bind', not loopback only: stop it (scripts/redis.sh stop) and run again" ;;
  esac
done
[ -n "$bind" ] || die "Redis on port $PORT binds every interface: stop it (scripts/redis.sh stop) and run again"

log "ready: Redis $(redis-cli -h 127.0.0.1 -p "$PORT" info server | sed -n 's/^redis_version:\([^\r]*\).*/\1/p'), modules: [$(redis-cli -h 127.0.0.1 -p "$PORT" module list | tr '\n' ' ')]"
echo "redis://127.0.0.1:${PORT}/0"
