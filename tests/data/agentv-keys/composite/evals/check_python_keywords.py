import json, sys
payload = json.load(sys.stdin)
words = payload["config"]["required_keywords"]
found = [w for w in words if w in payload["output"]]
print(json.dumps({"score": len(found) / len(words), "reason": f"found {found} of {words}"}))
