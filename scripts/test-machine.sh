#!/usr/bin/env bash
# What `make test` needs of the machine beyond Python and npm, then the command it is given
# (`make test` runs `scripts/test-machine.sh make test-installed`; `.ci/run` only calls `make test`).
#
# Debian packages the tests use for real: PostgreSQL (the server tests start a throwaway
# cluster of their own on loopback), Chromium (page tests through Playwright), bubblewrap
# (sandboxed command targets), and docker.io + debootstrap (trials in containers:
# tests/docker_engine.py). Installed here when run as root; otherwise one line names them
# and the command that installs them, and nothing runs.
#
# A Docker engine of our own, unless DOCKER_HOST already names one that answers: no
# iptables, no bridge (these machines allow only --network none / host containers; no
# bridge network is ever created), its own data root and socket under
# $AP_DOCKER_DIR (default /var/lib/agentsproof-ci-docker), left running for the next run.
# The tests import a debootstrap'd bookworm as their base image once per machine.
#
# CI is exported (unless already set) so a test whose runtime is missing fails instead of
# skipping: on a machine this script has set up, nothing is skipped for a missing component.
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"  # dockerd and debootstrap live there, off a non-root PATH

if [ "$#" -eq 0 ]; then
    echo "usage: scripts/test-machine.sh COMMAND [ARG...]" >&2
    exit 2
fi

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "make test needs these Debian packages: ${need[*]}; install them with: sudo apt-get install -y ${need[*]} (or run make test as root)" >&2
        exit 1
    fi
    echo "installing the Debian packages the tests use: ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! { [ -n "${DOCKER_HOST:-}" ] && docker version >/dev/null 2>&1; }; then
    AP_DOCKER="${AP_DOCKER_DIR:-/var/lib/agentsproof-ci-docker}"
    export DOCKER_HOST="unix://$AP_DOCKER/run/docker.sock"
    if ! docker version >/dev/null 2>&1; then
        if [ "$(id -u)" -ne 0 ]; then
            echo "make test needs a Docker engine: set DOCKER_HOST to one that answers, or run make test as root (it starts its own dockerd)" >&2
            exit 1
        fi
        echo "starting a Docker engine of our own at $DOCKER_HOST (log: $AP_DOCKER/dockerd.log)" >&2
        mkdir -p "$AP_DOCKER/data" "$AP_DOCKER/exec" "$AP_DOCKER/run"
        nohup dockerd --iptables=false --ip6tables=false --bridge=none \
            --data-root "$AP_DOCKER/data" --exec-root "$AP_DOCKER/exec" \
            --pidfile "$AP_DOCKER/run/docker.pid" -H "$DOCKER_HOST" >"$AP_DOCKER/dockerd.log" 2>&1 &
        for _ in $(seq 1 60); do docker version >/dev/null 2>&1 && break; sleep 1; done
        docker version >/dev/null 2>&1 || { echo "dockerd did not start; see $AP_DOCKER/dockerd.log" >&2; tail -5 "$AP_DOCKER/dockerd.log" >&2; exit 1; }
    fi
fi

export CI="${CI:-1}"
exec "$@"
