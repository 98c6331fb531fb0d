// Our package's requests against the server's OWN OpenAPI document (/api/openapi.json of the
// real server): every request the SDK makes — recorded on a loopback recorder while it runs a
// full flow with every field set — must hit a documented path and method, carry the documented
// x-api-key header and query parameters, and have a body that validates against the documented
// schema (required fields, no undocumented fields, types, enums, bounds). The response fields
// the SDK reads must be documented too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentsProof } from '../lib/index.js';
import { realServerMissing, startRealServer, startRecorder, unavailable } from './helpers.mjs';

let server = null;
let startError = null;
let doc = null;
const missing = realServerMissing();

before(async () => {
  if (missing) return;
  try {
    server = await startRealServer();
    const res = await fetch(`${server.baseUrl}/openapi.json`);
    if (res.status !== 200) throw new Error(`GET ${server.baseUrl}/openapi.json → ${res.status}`);
    doc = await res.json();
  } catch (err) {
    startError = err;
  }
});
after(async () => { if (server) await server.stop(); });

function need(t) {
  if (unavailable(t, missing)) return null;
  if (startError) throw startError;
  return doc;
}

function deref(d, schema) {
  let s = schema;
  for (let i = 0; s && s.$ref && i < 20; i++) {
    const parts = s.$ref.replace(/^#\//, '').split('/');
    s = parts.reduce((o, k) => o[k], d);
  }
  return s;
}

const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** Errors of `value` against the JSON-schema subset FastAPI/pydantic emit ([] when valid). */
export function validate(d, schema, value, path = '$') {
  const s = deref(d, schema);
  if (!s || Object.keys(s).filter((k) => !['title', 'description', 'default', 'examples'].includes(k)).length === 0) return [];
  const errs = [];
  if (s.anyOf || s.oneOf) {
    const branches = (s.anyOf || s.oneOf).map((b) => validate(d, b, value, path));
    if (!branches.some((e) => e.length === 0)) errs.push(`${path}: matches no branch (${branches.map((e) => e[0]).join(' | ')})`);
  }
  if (s.allOf) for (const b of s.allOf) errs.push(...validate(d, b, value, path));
  if (s.type) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const t = typeOf(value);
    const ok = types.includes(t) || (t === 'integer' && types.includes('number'));
    if (!ok) return [...errs, `${path}: ${t} where ${types.join('|')} is documented`];
  }
  if (s.enum && !s.enum.some((e) => e === value)) errs.push(`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(s.enum)}`);
  if (s.const !== undefined && s.const !== value) errs.push(`${path}: not ${JSON.stringify(s.const)}`);
  if (typeof value === 'string' && s.maxLength !== undefined && value.length > s.maxLength) errs.push(`${path}: longer than ${s.maxLength}`);
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) errs.push(`${path}: below ${s.minimum}`);
    if (s.maximum !== undefined && value > s.maximum) errs.push(`${path}: above ${s.maximum}`);
  }
  if (Array.isArray(value)) {
    if (s.maxItems !== undefined && value.length > s.maxItems) errs.push(`${path}: more than ${s.maxItems} items`);
    if (s.items) value.forEach((v, i) => errs.push(...validate(d, s.items, v, `${path}[${i}]`)));
  }
  if (typeOf(value) === 'object' && (s.properties || s.required)) {
    for (const k of s.required ?? []) if (!(k in value)) errs.push(`${path}: required field ${k} missing`);
    for (const [k, v] of Object.entries(value)) {
      if (s.properties && k in s.properties) errs.push(...validate(d, s.properties[k], v, `${path}.${k}`));
      else if (s.additionalProperties !== true && typeof s.additionalProperties !== 'object') errs.push(`${path}: field ${k} is not documented`);
    }
  }
  return errs;
}

/** The documented operation a recorded request hits: { template, op } or null. */
function operationFor(d, method, path) {
  for (const [template, ops] of Object.entries(d.paths)) {
    const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\\{[^}]+\\\}|\{[^}]+\}/g, '[^/]+')}$`);
    if (re.test(path) && ops[method.toLowerCase()]) return { template, op: ops[method.toLowerCase()] };
  }
  return null;
}

/** Run the SDK through every call it makes, every optional field set, against a recorder. */
async function recordFullFlow() {
  const rec = await startRecorder({ cases: [
    { id: 'g1', name: 'one', input: { q: 1 }, goal: 'g', expectedOutput: 'x' },
    { id: 'g2', name: 'two', input: { q: 2 } },
  ] });
  try {
    const ap = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl });
    const run = ap.startRun({
      projectSlug: 'demo', label: 'l', input: { a: [1, 2] }, clientRunId: 'c1', goldenId: 'g1', goal: 'goal',
      expectedOutput: { b: 1 }, expectedBehavior: 'eb', successCriteria: ['s'], traceAssertions: ['max_steps:3'],
      failureModes: ['f'], metadata: { m: 1 },
    });
    await run.trace('llm_call', 'm', async () => ({ usage: { prompt_tokens: 1, completion_tokens: 2 } }), 'in', { extract: () => ({ cost_usd: 0.5 }) });
    await run.trace('tool_call', 't', () => { throw new Error('x'); }).catch(() => {});
    for (const type of ['tool_result', 'memory_read', 'memory_write']) await run.logStep({ type, name: type, input: 1, output: 2, latency_ms: 1.5, token_count: 3, cost_usd: 0 });
    await run.complete({ done: true });
    const bare = ap.startRun({ projectSlug: 'demo' });
    bare.logStep({ type: 'llm_call' });
    await bare.complete(undefined);
    await ap.runProofSuite({
      projectSlug: 'demo', suiteSlug: 'suite-1',
      async handler(input, ctx) {
        const r = ctx.startRun();
        await r.trace('tool_call', 'x', () => input);
        if (input.q === 2) throw new Error('fails');
        await r.complete('ok');
      },
    });
    return rec.requests;
  } finally {
    await rec.close();
  }
}

test('openapi: every request our SDK makes is documented and its body validates', async (t) => {
  const d = need(t);
  if (!d) return;
  const requests = await recordFullFlow();
  const kinds = new Set();
  for (const r of requests) {
    const where = `${r.method} ${r.path}`;
    const found = operationFor(d, r.method, r.path);
    assert.ok(found, `${where} is not in the OpenAPI document`);
    kinds.add(`${r.method} ${found.template}`);
    const params = found.op.parameters ?? [];
    assert.ok(params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-api-key')
      || Object.values(d.components?.securitySchemes ?? {}).some((s) => s.in === 'header' && s.name.toLowerCase() === 'x-api-key'),
    `${where}: x-api-key is not documented`);
    for (const q of Object.keys(r.query)) assert.ok(params.some((p) => p.in === 'query' && p.name === q), `${where}: query ${q} not documented`);
    for (const p of params.filter((p) => p.required && p.in === 'query')) assert.ok(p.name in r.query, `${where}: required query ${p.name} missing`);
    const rb = found.op.requestBody;
    if (r.raw === '') {
      assert.ok(!rb || !rb.required, `${where}: sends no body, the document requires one`);
      continue;
    }
    assert.ok(rb, `${where}: sends a body, the document declares none`);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    const schema = rb.content?.['application/json']?.schema;
    assert.ok(schema, `${where}: no application/json body documented`);
    const errs = validate(d, schema, r.body);
    assert.deepEqual(errs, [], `${where}: ${JSON.stringify(r.body)}`);
  }
  // the flow exercised the whole protocol
  assert.deepEqual([...kinds].sort(), [
    'GET /api/proof-suites/{suite_slug}/cases',
    'POST /api/proof-runs/{proof_run_id}/case-results',
    'POST /api/proof-runs/{proof_run_id}/complete',
    'POST /api/runs',
    'POST /api/runs/{run_id}/complete',
    'POST /api/runs/{run_id}/steps',
  ]);
});

test('openapi: the response fields the SDK reads are documented (and required)', async (t) => {
  const d = need(t);
  if (!d) return;
  const reads = [
    ['post', '/api/runs', ['runId']],
    ['post', '/api/runs/{run_id}/complete', ['publicUrl']],
    ['get', '/api/proof-suites/{suite_slug}/cases', ['proofRunId', 'cases']],
    ['post', '/api/proof-runs/{proof_run_id}/complete', ['passedCases', 'failedCases', 'overallScore', 'publicUrl']],
  ];
  for (const [method, path, fields] of reads) {
    const op = d.paths[path]?.[method];
    assert.ok(op, `${method} ${path} documented`);
    const schema = deref(d, op.responses?.['200']?.content?.['application/json']?.schema);
    assert.ok(schema && schema.properties, `${method} ${path}: 200 response schema`);
    for (const f of fields) {
      assert.ok(f in schema.properties, `${method} ${path}: response field ${f}`);
      assert.ok((schema.required ?? []).includes(f), `${method} ${path}: response field ${f} required`);
    }
  }
  // the goldens the TypeScript SDK reads, camelCase
  const cases = deref(d, d.paths['/api/proof-suites/{suite_slug}/cases'].get.responses['200'].content['application/json'].schema);
  const golden = deref(d, cases.properties.cases.items);
  for (const f of ['id', 'name', 'input', 'goal', 'expectedOutput', 'expectedBehavior', 'successCriteria', 'traceAssertions']) {
    assert.ok(f in golden.properties, `golden field ${f} documented`);
  }
});

test('openapi: the validator itself rejects what it should', async (t) => {
  const d = need(t);
  if (!d) return;
  const runSchema = d.paths['/api/runs'].post.requestBody.content['application/json'].schema;
  assert.notDeepEqual(validate(d, runSchema, { projectSlug: 'p', successCriteria: 'not a list' }), []);
  const stepSchema = d.paths['/api/runs/{run_id}/steps'].post.requestBody.content['application/json'].schema;
  assert.notDeepEqual(validate(d, stepSchema, { name: 'no type' }), []);
  assert.notDeepEqual(validate(d, stepSchema, { type: 'llm_call', tokenCount: 3 }), []); // camelCase step field
  assert.notDeepEqual(validate(d, stepSchema, { type: 'thinking' }), []);
  assert.notDeepEqual(validate(d, stepSchema, { type: 'llm_call', token_count: 1.5 }), []);
  assert.deepEqual(validate(d, stepSchema, { type: 'llm_call', token_count: 2, latency_ms: 1.25 }), []);
  assert.equal(operationFor(d, 'POST', '/api/runs/abc/step'), null);
});
