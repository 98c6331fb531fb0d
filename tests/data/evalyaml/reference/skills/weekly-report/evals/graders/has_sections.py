"""code-grader: the answer on stdin; exit 0 passes."""
import sys

answer = sys.stdin.read()
missing = [h for h in ("Done", "Next", "Risks") if h not in answer]
if missing:
    print("missing sections: " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
