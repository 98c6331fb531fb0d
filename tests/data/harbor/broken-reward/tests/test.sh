#!/bin/bash
# A broken verifier: its reward is not a number.
mkdir -p /logs/verifier
echo "passed" > /logs/verifier/reward.txt
