// Runs the cases given on stdin (JSON, see tests/sdk/limit_cases.py) through the TypeScript
// SDK (sdk/typescript/lib/index.js) against AP_BASE_URL / AP_KEY, one run per case, and
// prints one JSON line: [{name, publicUrl, spooled, remoteRunId, error}].
// {"$big": N} in a case stands for the integer 10^N (a BigInt).
import { AgentsProof } from '../../sdk/typescript/lib/index.js';

function revive(v) {
  if (Array.isArray(v)) return v.map(revive);
  if (v !== null && typeof v === 'object') {
    if (Object.keys(v).length === 1 && typeof v.$big === 'number') return 10n ** BigInt(v.$big);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]));
  }
  return v;
}

let text = '';
for await (const chunk of process.stdin) text += chunk;
const cases = revive(JSON.parse(text));
const ap = new AgentsProof({ apiKey: process.env.AP_KEY, baseUrl: process.env.AP_BASE_URL, completeTimeoutMs: 60_000 });
const out = [];
for (const c of cases) {
  const run = ap.startRun({ projectSlug: process.env.AP_PROJECT, clientRunId: `ts-${c.name}`, ...c.run });
  for (const step of c.steps ?? []) run.logStep(step);
  try {
    const res = await run.complete(c.output ?? null);
    out.push({ name: c.name, publicUrl: res.publicUrl, spooled: res.spooled ?? null, remoteRunId: run.remoteRunId, error: null });
  } catch (err) {
    out.push({ name: c.name, publicUrl: null, spooled: err.spooled ?? null, remoteRunId: run.remoteRunId, error: String(err.message) });
  }
}
console.log(JSON.stringify(out));
