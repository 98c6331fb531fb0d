#!/bin/bash
echo "HOUSE-STYLE-OK: all systems nominal" > /app/report.txt
