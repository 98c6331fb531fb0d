import json, sys
payload = json.load(sys.stdin)
print(json.dumps({"score": 1.0 if payload["output"].strip() else 0.0, "reason": "non-empty"}))
