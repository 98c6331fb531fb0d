#!/bin/bash
# A float reward: the fraction of the four files that are right.
mkdir -p /logs/verifier
good=0
for n in 1 2 3 4; do
  if [ -f "/app/out/$n.txt" ] && [ "$(cat "/app/out/$n.txt")" = "$n" ]; then good=$((good + 1)); fi
done
case $good in
  0) echo 0 ;; 1) echo 0.25 ;; 2) echo 0.5 ;; 3) echo 0.75 ;; 4) echo 1.0 ;;
esac > /logs/verifier/reward.txt
