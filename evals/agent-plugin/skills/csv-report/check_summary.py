"""Script grader of the csv-report eval: run in the trial's workspace after the agent.

It sits beside eval.yaml, so agentsproof runs it from here: it is never copied into the
agent's workspace nor installed with the skill. Prints a JSON verdict with a score (the
share of checks passed) and one entry per check.
"""

import json
import pathlib

summary = pathlib.Path("summary.md")
text = summary.read_text(encoding="utf-8") if summary.is_file() else ""
checks = [
    {"name": "starts with a '# Summary' title", "passed": text.startswith("# Summary")},
    {"name": "names every region", "passed": all(r in text for r in ("north", "south", "east"))},
]
print(json.dumps({"score": sum(c["passed"] for c in checks) / len(checks), "checks": checks}))
