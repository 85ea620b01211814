#!/usr/bin/env bash
# Make sure a Docker Engine answers `docker info`, starting one if needed.
#
# Idempotent: exits 0 at once when `docker info` already works. Otherwise it
# installs Debian's docker.io if `dockerd` is missing, starts `dockerd` as a
# plain background process (no systemd needed), logging to
# /var/log/minik8s-dockerd.log, and waits up to 60 s for it.
#
# Usage (as root):  scripts/start-dockerd.sh [extra dockerd args...]
#   Extra arguments are passed to dockerd (for example a second engine on its
#   own socket: set DOCKER_HOST too, so that `docker info` asks that one).
# Environment:
#   MINIK8S_DOCKERD_LOG      log file        (default /var/log/minik8s-dockerd.log)
#   MINIK8S_DOCKERD_TIMEOUT  seconds to wait (default 60)
set -euo pipefail

LOG="${MINIK8S_DOCKERD_LOG:-/var/log/minik8s-dockerd.log}"
TIMEOUT="${MINIK8S_DOCKERD_TIMEOUT:-60}"

say() { echo "start-dockerd: $*"; }
die() { echo "start-dockerd: ERROR: $*" >&2; exit 1; }

docker_ok() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }

if docker_ok; then
    say "docker is already running"
    exit 0
fi

[ "$(id -u)" -eq 0 ] || die "must run as root to install/start dockerd"

# Install docker.io when dockerd (or the docker CLI) is missing.
if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    say "installing docker.io from the Debian archive"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q docker.io >/dev/null; then
        say "apt-get install failed; running apt-get update and retrying"
        apt-get update -q >/dev/null || die "apt-get update failed"
        apt-get install -y -q docker.io >/dev/null || die "apt-get install docker.io failed"
    fi
    command -v dockerd >/dev/null 2>&1 || die "docker.io installed but dockerd is not on PATH"
fi

mkdir -p "$(dirname "$LOG")"
dockerd_pid=""
if [ "$#" -eq 0 ] && pgrep -x dockerd >/dev/null 2>&1; then
    # A default dockerd is already starting (or hung): do not start a second
    # one, which would only fail on the pidfile lock. Just wait for it.
    say "dockerd is already running (pid $(pgrep -x dockerd | head -n1)); waiting for it"
else
    say "starting dockerd $* (log: $LOG)"
    nohup dockerd "$@" >>"$LOG" 2>&1 </dev/null &
    dockerd_pid=$!
    disown "$dockerd_pid" 2>/dev/null || true
fi

waited=0
while ! docker info >/dev/null 2>&1; do
    if [ -n "$dockerd_pid" ] && ! kill -0 "$dockerd_pid" 2>/dev/null; then
        die "dockerd (pid $dockerd_pid) exited during start-up; last log line: $(tail -n1 "$LOG" 2>/dev/null)"
    fi
    if [ "$waited" -ge "$TIMEOUT" ]; then
        die "dockerd did not answer 'docker info' within ${TIMEOUT}s; see $LOG"
    fi
    if [ $((waited % 5)) -eq 0 ]; then
        say "waiting for dockerd... ${waited}s"
    fi
    sleep 1
    waited=$((waited + 1))
done

say "docker is up after ${waited}s (server $(docker info --format '{{.ServerVersion}}' 2>/dev/null || echo '?'))"
