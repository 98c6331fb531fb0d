#!/usr/bin/env bash
# environment.setup: runs in the workdir (the trial's workspace), reads the recipe on stdin
set -eu
payload=$(cat)
case "$payload" in *'"workdir"'*) ;; *) echo "no recipe on stdin" >&2; exit 3 ;; esac
test -f seed.txt
echo "READY $1" > ready.txt
echo "materialized $1 in $AGENTV_ENVIRONMENT_WORKDIR"
