#!/bin/bash
# reward 1 when the report follows the house style (which only the skill tells).
mkdir -p /logs/verifier
if grep -q '^HOUSE-STYLE-OK:' /app/report.txt 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
