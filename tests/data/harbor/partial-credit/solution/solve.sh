#!/bin/bash
for n in 1 2 3 4; do echo "$n" > "/app/out/$n.txt"; done
