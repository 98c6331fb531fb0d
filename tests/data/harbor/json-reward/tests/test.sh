#!/bin/bash
# reward.json: the reward, and the checks it was made of ($EXPECTED comes from [verifier] env).
mkdir -p /logs/verifier
exists=0; right=0
[ -f /app/status.txt ] && exists=1
[ "$exists" = 1 ] && [ "$(cat /app/status.txt)" = "$EXPECTED" ] && right=1
if [ "$right" = 1 ]; then reward=1.0; else reward=0.0; fi
printf '{"reward": %s, "file_exists": %s, "content_right": %s}\n' "$reward" "$exists" "$right" > /logs/verifier/reward.json
