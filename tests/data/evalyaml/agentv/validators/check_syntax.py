"""agentv-style script grader: the JSON payload on stdin, a score on stdout."""
import ast
import json
import sys

payload = json.load(sys.stdin)
code = payload.get("output") or payload.get("answer", "")
if "```" in code:
    code = code.split("```")[1].removeprefix("python\n")
try:
    ast.parse(code)
except SyntaxError as err:
    print(json.dumps({"score": 0.0, "assertions": [{"text": "valid Python", "passed": False, "evidence": str(err)}]}))
else:
    print(json.dumps({"score": 1.0, "assertions": [{"text": "valid Python", "passed": True, "evidence": "parses"}]}))
