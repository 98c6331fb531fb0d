// Wire shape and never-break-the-agent behaviour, against a recording loopback server
// (the real server is exercised in e2e.test.mjs). These pin the bytes the published
// agentsproof@1.0.6 sends, so a drop-in replacement stays one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { AgentsProof, AgentRun, AgentsProofError, DEFAULT_BASE_URL, sniffUsage, safeStringify, traceLlm, traceTool } from '../lib/index.js';
import { SDK_DIR, deadPort, sleep, startRecorder, waitFor } from './helpers.mjs';

const RUN_FIELDS = {
  label: 'lbl', input: { q: 1 }, projectSlug: 'proj', goldenId: 'g-1', goal: 'the goal',
  expectedOutput: { a: 2 }, expectedBehavior: 'behave', successCriteria: ['c1', 'c2'],
  traceAssertions: ['must_call:search', 'max_steps:5'], failureModes: ['fm'], metadata: { team: 'x' },
};

test('startRun posts every field, camelCase, with x-api-key, to {baseUrl}/runs', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const ap = new AgentsProof({ apiKey: 'k-123', baseUrl: rec.baseUrl + '/' });
  const run = ap.startRun({ ...RUN_FIELDS, clientRunId: 'client-1' });
  assert.equal(await run.getRemoteId(), 'run-1');
  assert.equal(rec.requests.length, 1);
  const r = rec.requests[0];
  assert.equal(r.method, 'POST');
  assert.equal(r.path, '/api/runs');
  assert.equal(r.headers['x-api-key'], 'k-123');
  assert.match(r.headers['content-type'], /^application\/json/);
  assert.deepEqual(r.body, { ...RUN_FIELDS, clientRunId: 'client-1' });
});

test('startRun: metadata defaults to {}, clientRunId is a fresh 12-char id, undefined fields omitted', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl });
  const a = ap.startRun({ projectSlug: 'p', input: 'hi' });
  const b = ap.startRun({ projectSlug: 'p', input: 'hi' });
  await a.getRemoteId();
  await b.getRemoteId();
  const [ra, rb] = rec.requests.map((r) => r.body);
  assert.deepEqual(Object.keys(ra).sort(), ['clientRunId', 'input', 'metadata', 'projectSlug']);
  assert.deepEqual(ra.metadata, {});
  assert.match(ra.clientRunId, /^[A-Za-z0-9_-]{12}$/);
  assert.equal(ra.clientRunId, a.runId);
  assert.notEqual(ra.clientRunId, rb.clientRunId);
});

test('baseUrl: option, else env AGENTSPROOF_BASE_URL, else the local server', async () => {
  const script = `import { AgentsProof } from './lib/index.js';
    const a = new AgentsProof({ apiKey: 'k' }); const b = new AgentsProof({ apiKey: 'k', baseUrl: 'http://h:1/x/' });
    console.log(JSON.stringify([a.baseUrl, b.baseUrl, a.apiKey]));`;
  const run = (envExtra) => {
    const env = { ...process.env, ...envExtra };
    for (const k of Object.keys(envExtra)) if (envExtra[k] === undefined) delete env[k];
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: SDK_DIR, env, encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout);
  };
  assert.deepEqual(run({ AGENTSPROOF_BASE_URL: undefined }), ['http://127.0.0.1:8787/api', 'http://h:1/x', 'k']);
  assert.deepEqual(run({ AGENTSPROOF_BASE_URL: 'http://10.0.0.1:9/api/' }), ['http://10.0.0.1:9/api', 'http://h:1/x', 'k']);
  assert.equal(DEFAULT_BASE_URL, 'http://127.0.0.1:8787/api');
});

test('steps: snake_case body, step_index in order, created_at ISO; complete posts {output}', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl });
  const run = ap.startRun({ projectSlug: 'p', input: 'q' });
  const out1 = await run.trace('llm_call', 'gpt', async () => ({ text: 'plan', usage: { prompt_tokens: 3, completion_tokens: 4 } }), { prompt: 'q' });
  assert.equal(out1.text, 'plan');
  const out2 = await run.trace('tool_call', 'search', () => ['r1', 'r2']); // sync fn
  assert.deepEqual(out2, ['r1', 'r2']);
  await run.logStep({ type: 'memory_write', name: 'mem', input: 'k', output: 'v', latency_ms: 5, token_count: 7, cost_usd: 0.01 });
  const res = await run.complete({ answer: 42 });
  assert.deepEqual(res, { publicUrl: 'http://127.0.0.1/r/run-1' });
  assert.equal(run.publicUrl, 'http://127.0.0.1/r/run-1');

  const paths = rec.requests.map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(paths, ['POST /api/runs', 'POST /api/runs/run-1/steps', 'POST /api/runs/run-1/steps', 'POST /api/runs/run-1/steps', 'POST /api/runs/run-1/complete']);
  const steps = rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => r.body);
  for (const r of rec.requests) assert.equal(r.headers['x-api-key'], 'k');
  assert.deepEqual(steps.map((s) => s.step_index), [0, 1, 2]);
  for (const s of steps) assert.ok(!Number.isNaN(Date.parse(s.created_at)) && s.created_at.endsWith('Z'), s.created_at);
  assert.deepEqual(Object.keys(steps[0]).sort(), ['created_at', 'input', 'latency_ms', 'name', 'output', 'step_index', 'token_count', 'type']);
  assert.equal(steps[0].type, 'llm_call');
  assert.equal(steps[0].name, 'gpt');
  assert.deepEqual(steps[0].input, { prompt: 'q' });
  assert.equal(steps[0].token_count, 7);
  assert.ok(typeof steps[0].latency_ms === 'number' && steps[0].latency_ms >= 0);
  assert.deepEqual(Object.keys(steps[1]).sort(), ['created_at', 'latency_ms', 'name', 'output', 'step_index', 'type']);
  assert.deepEqual(steps[2], { type: 'memory_write', name: 'mem', input: 'k', output: 'v', latency_ms: 5, token_count: 7, cost_usd: 0.01, step_index: 2, created_at: steps[2].created_at });
  const complete = rec.requests.at(-1);
  assert.deepEqual(complete.body, { output: { answer: 42 } });
});

test('steps arrive in order even when the server answers them out of order', async (t) => {
  // step 0 is slow: a client that sent in parallel would deliver 1..9 first
  const rec = await startRecorder({ stepDelayMs: (i) => (i === 0 ? 300 : 0) });
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  for (let i = 0; i < 10; i++) run.logStep({ type: 'tool_call', name: `t${i}`, output: i });
  await run.complete('done');
  const stepReqs = rec.requests.filter((r) => r.path.endsWith('/steps'));
  assert.deepEqual(stepReqs.map((r) => r.body.step_index), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // one at a time: step i+1 is sent only after step i was answered
  for (let i = 1; i < stepReqs.length; i++) assert.ok(stepReqs[i].at >= stepReqs[i - 1].answeredAt, `step ${i} overtook step ${i - 1}`);
  assert.ok(rec.requests.at(-1).path.endsWith('/complete'), 'complete is sent after the steps');
});

test('a step refused with a server error is retried once, in place (order kept); a 4xx is not retried', async (t) => {
  // step 1 fails with 503 on its first attempt; step 3 always fails with 422
  const rec = await startRecorder({ stepStatus: (i, attempt) => (i === 1 && attempt === 1 ? 503 : i === 3 ? 422 : 0) });
  t.after(rec.close);
  const errors = [];
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl, onError: (e, c) => errors.push([c.step, e.status]) }).startRun({ projectSlug: 'p', input: 1 });
  for (let i = 0; i < 5; i++) run.logStep({ type: 'tool_call', name: `s${i}` });
  const res = await run.complete(null);
  const sent = rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => r.body.step_index);
  assert.deepEqual(sent, [0, 1, 1, 2, 3, 4]);
  assert.deepEqual(errors, [[3, 422], [undefined, null]]); // the refusal, then where complete() kept it
  // the refused step is not dropped: spooled (as a run already delivered) for `agentsproof sync`
  const record = JSON.parse(readFileSync(res.spooled, 'utf8'));
  assert.deepEqual([record.completed, record.remoteRunId, record.steps.map((s) => s.name)], [false, run.remoteRunId, ['s3']]);
});

test('a script awaiting complete() during a step retry is neither cut short nor kept alive by timers', async (t) => {
  const rec = await startRecorder({ stepStatus: (i, attempt) => (attempt === 1 ? 503 : 0) });
  t.after(rec.close);
  const script = `import { AgentsProof } from './lib/index.js';
    const run = new AgentsProof({ apiKey: 'k', baseUrl: '${rec.baseUrl}' }).startRun({ projectSlug: 'p', input: 1 });
    run.logStep({ type: 'tool_call', name: 'retried' });
    const { publicUrl } = await run.complete('x');
    console.log('after complete', publicUrl);`;
  const t0 = Date.now();
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: SDK_DIR, encoding: 'utf8', timeout: 20000 });
  const took = Date.now() - t0;
  assert.equal(stdout.trim(), 'after complete http://127.0.0.1/r/run-1');
  assert.ok(took < 5000, `the process lingered ${took} ms (flush timeout is 10 s)`);
  assert.deepEqual(rec.requests.map((r) => r.path.split('/').at(-1)), ['runs', 'steps', 'steps', 'complete']);
});

test('trace does not wait for the network', async (t) => {
  const rec = await startRecorder({ stepDelayMs: () => 1500 });
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  const t0 = Date.now();
  for (let i = 0; i < 3; i++) await run.trace('tool_call', 'x', () => i);
  await run.logStep({ type: 'tool_call', name: 'y' });
  assert.ok(Date.now() - t0 < 500, `trace/logStep took ${Date.now() - t0} ms`);
  assert.ok(run.pendingSteps >= 3);
});

test('trace of a sync function queues its step before returning: call order is step order', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  const slow = run.trace('llm_call', 'async-first', () => sleep(50).then(() => 'a')); // finishes last
  run.trace('tool_call', 'sync-1', () => 1); // not awaited
  run.logStep({ type: 'tool_result', name: 'manual' });
  run.trace('tool_call', 'sync-2', () => 2);
  assert.equal(run.steps.length, 3, 'sync steps are logged synchronously');
  await slow;
  await run.complete(null);
  const names = rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => [r.body.step_index, r.body.name]);
  assert.deepEqual(names, [[0, 'sync-1'], [1, 'manual'], [2, 'sync-2'], [3, 'async-first']]);
});

test('complete waits for pending steps up to flushTimeoutMs, then sends what is unacknowledged itself', async (t) => {
  const rec = await startRecorder({ stepDelayMs: () => 3000 });
  t.after(rec.close);
  const errors = [];
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl, flushTimeoutMs: 400, onError: (e, ctx) => errors.push([e, ctx]) })
    .startRun({ projectSlug: 'p', input: 1 });
  run.logStep({ type: 'tool_call', name: 'slow' });
  const t0 = Date.now();
  const res = await run.complete('x');
  const took = Date.now() - t0;
  assert.ok(took >= 350 && took < 9000, `complete took ${took} ms`);
  assert.equal(res.publicUrl, 'http://127.0.0.1/r/run-1');
  const sent = rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => r.body.step_index);
  assert.ok(sent.length >= 1 && sent.every((i) => i === 0), `the slow step was sent again, never lost: ${sent}`);
  assert.ok(errors.some(([e, ctx]) => ctx.op === 'complete' && e.code === 'timeout'), 'the still-pending step is reported');
});

test('complete waits for a step that is merely slow (within the bound)', async (t) => {
  const rec = await startRecorder({ stepDelayMs: () => 300 });
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  run.logStep({ type: 'tool_call', name: 'slowish' });
  await run.complete('x');
  const order = rec.requests.map((r) => r.path.split('/').at(-1));
  assert.deepEqual(order, ['runs', 'steps', 'complete']);
  assert.equal(run.pendingSteps, 0);
});

test('server down: startRun/trace/logStep never throw; errors go to onError; complete rejects', async () => {
  const port = await deadPort();
  const errors = [];
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/api`, onError: (e, ctx) => errors.push([e, ctx]) });
  const run = ap.startRun({ projectSlug: 'p', input: 'q' });
  assert.equal(await run.trace('llm_call', 'm', async () => 'ok'), 'ok');
  assert.equal(await run.trace('tool_call', 't', () => 7), 7);
  await run.logStep({ type: 'tool_result', output: 1 });
  assert.equal(await run.getRemoteId(), null);
  await run.flush(2000);
  await waitFor(() => errors.length >= 1, 3000, 'onError');
  assert.equal(errors[0][1].op, 'startRun');
  assert.ok(errors[0][0] instanceof AgentsProofError);
  assert.equal(errors[0][0].code, 'unreachable');
  await assert.rejects(run.complete('x'), (err) => err instanceof AgentsProofError && err.code === 'unreachable' && /failed to complete run/.test(err.message));
});

test('a traced function\'s own error is logged as the step output and re-thrown unchanged', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  const boom = new RangeError('boom');
  await assert.rejects(run.trace('tool_call', 'bad', async () => { throw boom; }), (e) => e === boom);
  await assert.rejects(run.trace('tool_call', 'bad-sync', () => { throw boom; }), (e) => e === boom);
  await run.complete(null);
  const steps = rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => r.body);
  assert.deepEqual(steps.map((s) => s.output), [{ error: 'RangeError: boom' }, { error: 'RangeError: boom' }]);
  assert.deepEqual(rec.requests.at(-1).body, { output: null });
});

test('wrong key (401): trace and logStep keep working, complete rejects with status 401 / unauthorized', async (t) => {
  const rec = await startRecorder({ status: 401 });
  t.after(rec.close);
  const errors = [];
  const run = new AgentsProof({ apiKey: 'wrong', baseUrl: rec.baseUrl, onError: (e) => errors.push(e) }).startRun({ projectSlug: 'p', input: 1 });
  assert.equal(await run.trace('tool_call', 'x', () => 'fine'), 'fine');
  await run.logStep({ type: 'tool_call', name: 'y' });
  await assert.rejects(run.complete('out'), (err) => {
    assert.ok(err instanceof AgentsProofError);
    assert.equal(err.status, 401);
    assert.equal(err.code, 'unauthorized');
    assert.match(err.message, /^AgentsProof: failed to complete run .*401/);
    return true;
  });
  assert.equal(errors[0].status, 401);
  // the steps were not sent to a run that does not exist
  assert.deepEqual(rec.requests.map((r) => r.path), ['/api/runs']);
});

test('an onError that throws does not break the agent either', async () => {
  const port = await deadPort();
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/api`, onError: () => { throw new Error('handler bug'); } });
  const run = ap.startRun({ projectSlug: 'p', input: 1 });
  assert.equal(await run.trace('tool_call', 'x', () => 1), 1);
  await run.flush(2000);
  await assert.rejects(run.complete(1), AgentsProofError);
});

test('non-JSON outputs (cycles, BigInt, Map, Error, class instances) are serialised, not thrown', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 10n });
  const cyclic = { name: 'c' };
  cyclic.self = cyclic;
  class Resp { constructor() { this.text = 'hi'; } get hidden() { return 1; } }
  await run.trace('tool_call', 'x', () => ({ cyclic, big: 2n ** 70n, map: new Map([['a', 1]]), set: new Set([1]), err: new TypeError('t'), resp: new Resp(), fn() {}, nan: NaN }));
  await run.complete({ bad: { toJSON() { throw new Error('no'); } } });
  const step = rec.requests.find((r) => r.path.endsWith('/steps')).body;
  const { agentsproof_fit: fit, ...output } = step.output;
  assert.deepEqual(output, {
    cyclic: { name: 'c', self: '[Circular]' }, big: '1180591620717411303424', map: { a: 1 }, set: [1],
    err: { name: 'TypeError', message: 't' }, resp: { text: 'hi' }, nan: null,
  });
  // every value changed on the way is noted, in the Python SDK's words
  assert.deepEqual(fit.sort(), [
    'output: NaN sent as null', 'output: a big integer sent as text', 'output: a function dropped',
    'output: a value that contains itself; the repeat replaced by a marker',
  ]);
  assert.equal(rec.requests[0].body.input, '10');
  assert.deepEqual(rec.requests[0].body.metadata.agentsproof_fit, ['input: a big integer sent as text']);
  assert.deepEqual(rec.requests.at(-1).body.output.agentsproof_fit, ['output: a value that could not be read; sent as a placeholder']);
  assert.equal(rec.requests.at(-1).path, '/api/runs/run-1/complete');
  assert.equal(safeStringify(undefined), 'null');
});

test('logged values are captured at log time (later mutation does not change the step)', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  const state = { n: 1 };
  await run.trace('memory_read', 'm', () => state);
  state.n = 2;
  await run.complete(state);
  assert.deepEqual(rec.requests[1].body.output, { n: 1 });
});

test('usage sniffing: Anthropic, OpenAI total, OpenAI prompt+completion, objects with getters; none → omitted', () => {
  assert.deepEqual(sniffUsage({ usage: { input_tokens: 10, output_tokens: 5 } }), { token_count: 15 });
  assert.deepEqual(sniffUsage({ usage: { total_tokens: 42, prompt_tokens: 1, completion_tokens: 1 } }), { token_count: 42 });
  assert.deepEqual(sniffUsage({ usage: { prompt_tokens: 3, completion_tokens: 4 } }), { token_count: 7 });
  class Usage { get input_tokens() { return 2; } get output_tokens() { return 3; } }
  assert.deepEqual(sniffUsage({ usage: new Usage() }), { token_count: 5 });
  assert.deepEqual(sniffUsage({ usage: { inputTokens: 1, outputTokens: 2 } }), { token_count: 3 });
  assert.deepEqual(sniffUsage({ usage: { input_tokens: 'x' } }), {});
  assert.deepEqual(sniffUsage(null), {});
  assert.deepEqual(sniffUsage('text'), {});
  assert.deepEqual(sniffUsage({ get usage() { throw new Error('x'); } }), {});
  assert.deepEqual(sniffUsage({ usage: { input_tokens: -1, output_tokens: 2 } }), {});
  assert.deepEqual(sniffUsage({ usage: { promptTokens: 4, completionTokens: 5, totalTokens: 9 } }), { token_count: 9 });
});

test('usage sniffing: cost from the usage block, else from a prices table keyed by the response model', () => {
  assert.deepEqual(sniffUsage({ usage: { total_tokens: 5, cost: 0.003 } }), { token_count: 5, cost_usd: 0.003 });
  const prices = { 'gpt-4o': [2.5, 10], 'gpt-4o-mini': [0.15, 0.6] };
  const openai = { model: 'gpt-4o-mini-2024-07-18', usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } };
  assert.deepEqual(sniffUsage(openai, prices), { token_count: 1500, cost_usd: 0.00045 });
  const anthropic = { model: 'claude-x', usage: { input_tokens: 10, output_tokens: 20 } };
  assert.deepEqual(sniffUsage(anthropic, new Map([['claude', [3, 15]]])), { token_count: 30, cost_usd: 0.00033 });
  assert.deepEqual(sniffUsage({ model: 'unknown', usage: { input_tokens: 1, output_tokens: 1 } }, prices), { token_count: 2 });
});

test('trace: extract wins over sniffing; a throwing extract falls back to sniffing and is reported', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const errors = [];
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl, prices: { m: [1, 10] }, onError: (e, c) => errors.push(c.op) }).startRun({ projectSlug: 'p', input: 1 });
  const anthropicLike = { content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 11, output_tokens: 9 } };
  await run.trace('llm_call', 'claude', async () => anthropicLike);
  await run.trace('llm_call', 'mine', () => ({ u: { tokens: 99 }, billed: 0.25, usage: { total_tokens: 1 } }), 'in', {
    extract: (out) => ({ token_count: out.u.tokens, cost_usd: out.billed }),
  });
  await run.trace('llm_call', 'broken-extract', () => ({ usage: { total_tokens: 5 } }), undefined, { extract: () => { throw new Error('x'); } });
  await run.trace('tool_call', 'plain', () => 'no usage');
  await traceLlm(run, 'wrapped', () => ({ usage: { total_tokens: 3 } }));
  await traceTool(run, 'wrapped-tool', () => 1);
  await run.trace('llm_call', 'priced', () => ({ model: 'm-1', usage: { input_tokens: 50, output_tokens: 5 } }));
  await run.complete(null);
  const steps = rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => r.body);
  assert.equal(steps[0].token_count, 20);
  assert.equal(steps[0].cost_usd, undefined);
  assert.equal(steps[6].cost_usd, 0.0001, 'prices from the client options');
  assert.equal(steps[1].token_count, 99);
  assert.equal(steps[1].cost_usd, 0.25);
  assert.equal(steps[1].input, 'in');
  assert.equal(steps[2].token_count, 5);
  assert.ok(!('token_count' in steps[3]) && !('cost_usd' in steps[3]));
  assert.deepEqual([steps[4].type, steps[4].token_count, steps[5].type], ['llm_call', 3, 'tool_call']);
  assert.deepEqual(errors, ['extract']);
});

test('complete twice returns the same result and sends one request', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).startRun({ projectSlug: 'p', input: 1 });
  const [a, b] = await Promise.all([run.complete(1), run.complete(2)]);
  assert.deepEqual(a, b);
  assert.equal(rec.requests.filter((r) => r.path.endsWith('/complete')).length, 1);
});

test('the step queue is bounded: overflow waits for complete() (reported, never thrown), nothing is lost', async (t) => {
  const rec = await startRecorder({ stepDelayMs: () => 50 });
  t.after(rec.close);
  const errors = [];
  const run = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl, maxPendingSteps: 3, onError: (e) => errors.push(e.code) }).startRun({ projectSlug: 'p', input: 1 });
  for (let i = 0; i < 6; i++) run.logStep({ type: 'tool_call', name: `s${i}` });
  assert.deepEqual(errors, ['queue_full', 'queue_full', 'queue_full']);
  await run.complete(null);
  assert.deepEqual(rec.requests.filter((r) => r.path.endsWith('/steps')).map((r) => r.body.step_index), [0, 1, 2, 3, 4, 5]);
});

test('runProofSuite: published wire shape; camelCase or snake_case goldens; pass = handler did not throw', async (t) => {
  const cases = [
    { id: 'g1', name: 'one', input: { q: 'a' }, goal: 'goal one', expectedOutput: 'A' },
    { id: 'g2', name: 'two', input: { q: 'b' }, goal: 'goal two', expected_output: 'B', success_criteria: ['s'] },
  ];
  const rec = await startRecorder({ cases });
  t.after(rec.close);
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl });
  const seen = [];
  const result = await ap.runProofSuite({
    projectSlug: 'my proj',
    suiteSlug: 'core',
    async handler(input, ctx) {
      seen.push([input, ctx.golden.expectedOutput, ctx.golden.successCriteria]);
      const run = ctx.startRun();
      await run.trace('tool_call', 'work', () => input.q.toUpperCase());
      if (input.q === 'b') throw new Error('case two broke');
      await run.complete({ answer: input.q.toUpperCase() });
    },
  });
  assert.deepEqual(result, { passedCases: 1, failedCases: 1, overallScore: 0.5, publicUrl: 'http://127.0.0.1/p/proof-1' });
  assert.deepEqual(seen, [[{ q: 'a' }, 'A', undefined], [{ q: 'b' }, 'B', ['s']]]);
  const load = rec.requests[0];
  assert.equal(load.method, 'GET');
  assert.equal(load.path, '/api/proof-suites/core/cases');
  assert.deepEqual(load.query, { projectSlug: 'my proj' });
  const runs = rec.requests.filter((r) => r.path === '/api/runs').map((r) => r.body);
  assert.equal(runs.length, 2);
  assert.deepEqual({ ...runs[0], clientRunId: undefined }, {
    clientRunId: undefined, projectSlug: 'my proj', label: 'Proof case: one', input: { q: 'a' }, goal: 'goal one', expectedOutput: 'A',
    metadata: { goldenId: 'g1', proofRunId: 'proof-1' },
  });
  const results = rec.requests.filter((r) => r.path.endsWith('/case-results'));
  assert.equal(results[0].path, '/api/proof-runs/proof-1/case-results');
  assert.deepEqual(results.map((r) => r.body), [
    { goldenId: 'g1', runId: 'run-1', score: null, passed: true, failureSummary: null },
    { goldenId: 'g2', runId: 'run-2', score: null, passed: false, failureSummary: 'case two broke' },
  ]);
  // the failed case's run was completed for it, with the error as output
  const completes = rec.requests.filter((r) => r.path.endsWith('/complete') && r.path.startsWith('/api/runs/'));
  assert.deepEqual(completes.map((r) => r.body), [{ output: { answer: 'A' } }, { output: { error: 'case two broke' } }]);
  const last = rec.requests.at(-1);
  assert.equal(`${last.method} ${last.path}`, 'POST /api/proof-runs/proof-1/complete');
  assert.equal(last.raw, '');
  for (const r of rec.requests) assert.equal(r.headers['x-api-key'], 'k');
});

test('runProofSuite: a sync handler that does not complete its run gets it completed with its return value', async (t) => {
  const rec = await startRecorder({ cases: [{ id: 'g1', name: 'one', input: 3 }] });
  t.after(rec.close);
  const result = await new AgentsProof({ apiKey: 'k', baseUrl: rec.baseUrl }).runProofSuite({
    projectSlug: 'p', suiteSlug: 's',
    handler: (input, ctx) => { ctx.startRun().logStep({ type: 'tool_call', name: 'double' }); return input * 2; },
  });
  assert.equal(result.passedCases, 1);
  const complete = rec.requests.find((r) => r.path === '/api/runs/run-1/complete');
  assert.deepEqual(complete.body, { output: 6 });
  const order = rec.requests.map((r) => r.path.split('/').slice(2).join('/'));
  assert.deepEqual(order, ['proof-suites/s/cases', 'runs', 'runs/run-1/steps', 'runs/run-1/complete', 'proof-runs/proof-1/case-results', 'proof-runs/proof-1/complete']);
});

test('runProofSuite rejects with AgentsProofError when the suite cannot be loaded', async (t) => {
  const rec = await startRecorder({ status: 401 });
  t.after(rec.close);
  await assert.rejects(
    new AgentsProof({ apiKey: 'bad', baseUrl: rec.baseUrl }).runProofSuite({ projectSlug: 'p', suiteSlug: 's', handler: () => {} }),
    (e) => e instanceof AgentsProofError && e.status === 401 && /failed to load proof suite/.test(e.message),
  );
});

test('AgentRun can be constructed directly, as in agentsproof@1.0.6', async (t) => {
  const rec = await startRecorder();
  t.after(rec.close);
  const run = new AgentRun({ projectSlug: 'p', input: 'x', apiKey: 'k', baseUrl: rec.baseUrl });
  await run.trace('tool_call', 't', async () => 1);
  assert.deepEqual(await run.complete('o'), { publicUrl: 'http://127.0.0.1/r/run-1' });
  assert.ok(run.elapsedMs >= 0);
});

test('an unawaited run against a dead server leaves no unhandled rejection behind', async () => {
  const port = await deadPort();
  const script = `import { AgentsProof } from './lib/index.js';
    const ap = new AgentsProof({ apiKey: 'k', baseUrl: 'http://127.0.0.1:${port}/api' });
    const run = ap.startRun({ projectSlug: 'p', input: 1 });
    run.trace('tool_call', 'x', () => 1);
    run.logStep({ type: 'tool_call' });
    setTimeout(() => console.log('agent finished'), 300);`;
  const out = spawnSync(process.execPath, ['--unhandled-rejections=strict', '--input-type=module', '-e', script], { cwd: SDK_DIR, encoding: 'utf8', timeout: 20000 });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), 'agent finished');
  assert.equal(out.stderr, '');
});

test('lib/index.cjs and lib/index.d.cts are up to date with lib/index.js (npm run build)', () => {
  const out = spawnSync(process.execPath, ['scripts/build-cjs.mjs', '--check'], { cwd: SDK_DIR, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
});

test('require() gets the same API as import', () => {
  const out = spawnSync(process.execPath, ['-e', `const ap = require('./lib/index.cjs'); console.log(Object.keys(ap).sort().join(','), typeof ap.AgentsProof)`], { cwd: SDK_DIR, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), 'AgentRun,AgentsProof,AgentsProofError,DEFAULT_BASE_URL,VERSION,safeStringify,sniffUsage,traceLlm,traceTool function');
});

test('sleep helper sanity (the recorder really delays)', async (t) => {
  const rec = await startRecorder({ stepDelayMs: () => 200 });
  t.after(rec.close);
  const t0 = Date.now();
  await fetch(`${rec.baseUrl}/runs/x/steps`, { method: 'POST', body: '{"step_index":0}' });
  assert.ok(Date.now() - t0 >= 180);
  await sleep(0);
});

test('URL credentials never reach a spooled record or an error: the base URL is used without them', async () => {
  const port = await deadPort();
  const spoolDir = (await import('node:fs')).mkdtempSync((await import('node:path')).join((await import('node:os')).tmpdir(), 'ap-ts-cred-'));
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: `http://user:hunter2@127.0.0.1:${port}/api`, spoolDir, completeTimeoutMs: 1500 });
  assert.equal(ap.baseUrl, `http://127.0.0.1:${port}/api`);
  const run = ap.startRun({ projectSlug: 'p', input: 1, clientRunId: 'cred-run' });
  run.logStep({ type: 'tool_call', name: 's' });
  const err = await run.complete('x').then(() => null, (e) => e);
  assert.ok(err instanceof AgentsProofError && err.spooled, String(err));
  const text = readFileSync(err.spooled, 'utf8');
  assert.ok(!text.includes('hunter2') && !err.message.includes('hunter2'), text);
  assert.equal(JSON.parse(text).reason.includes('user:'), false);
});
