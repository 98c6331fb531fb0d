// End to end against the REAL Python server (agentsproof serve via tests/server/serverkit.py,
// with its scripted judge): runs, steps in order, grades, goldens and proof suites round-trip.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AgentsProof, AgentsProofError } from '../lib/index.js';
import { PYTHON, SDK_DIR, api, deadPort, realServerMissing, startRealServer, unavailable, waitFor } from './helpers.mjs';

let server = null;
let startError = null;
const reportPages = []; // [url, text it must show], checked by one test below
const missing = realServerMissing();

before(async () => {
  if (missing) return;
  try {
    server = await startRealServer();
  } catch (err) {
    startError = err;
  }
});
after(async () => { if (server) await server.stop(); });

/** The server for this test, or null after skipping (locally) / throwing (under CI). */
function need(t) {
  if (unavailable(t, missing)) return null;
  if (startError) throw startError;
  return server;
}

async function gradedRun(srv, runId) {
  return waitFor(async () => {
    const r = await api(srv, 'GET', `/runs/${runId}`);
    assert.equal(r.status, 200);
    return r.body.grade && r.body.grade.status === 'done' ? r.body : null;
  }, 30_000, `grade of run ${runId}`);
}

test('e2e: a run with every startRun field, async and sync traced steps, stored and graded', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const errors = [];
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl, onError: (e) => errors.push(e) });
  const run = ap.startRun({
    projectSlug: srv.project,
    label: 'e2e: capital of Italy',
    input: { question: 'capital of Italy?' },
    clientRunId: 'client-e2e-1',
    goal: 'Answer with the capital city',
    expectedOutput: 'Rome',
    expectedBehavior: 'Looks the country up, then answers.',
    successCriteria: ['Names Rome'],
    traceAssertions: ['must_call:lookup', 'max_steps:5'],
    failureModes: ['wrong city'],
    metadata: { suite: 'e2e', n: 1 },
  });
  const plan = await run.trace('llm_call', 'planner', async () => {
    await new Promise((r) => setTimeout(r, 5));
    return { content: [{ type: 'text', text: 'lookup italy' }], usage: { input_tokens: 30, output_tokens: 12 } };
  }, { question: 'capital of Italy?' });
  assert.equal(plan.usage.output_tokens, 12);
  const city = await run.trace('tool_call', 'lookup', () => 'Rome', { country: 'italy' }, { extract: () => ({ cost_usd: 0.002 }) });
  assert.equal(city, 'Rome');
  run.logStep({ type: 'memory_write', name: 'remember', input: 'italy', output: 'Rome', latency_ms: 1 });
  const { publicUrl } = await run.complete({ answer: 'Rome' });
  assert.deepEqual(errors, []);
  assert.match(publicUrl, /^http:\/\/127\.0\.0\.1:\d+\/r\/[A-Za-z0-9_-]{16,}$/);

  const stored = await gradedRun(srv, run.remoteRunId);
  assert.equal(stored.clientRunId, 'client-e2e-1');
  assert.equal(stored.label, 'e2e: capital of Italy');
  assert.deepEqual(stored.input, { question: 'capital of Italy?' });
  assert.equal(stored.goal, 'Answer with the capital city');
  assert.equal(stored.expected_output, 'Rome');
  assert.equal(stored.expected_behavior, 'Looks the country up, then answers.');
  assert.deepEqual(stored.success_criteria, ['Names Rome']);
  assert.deepEqual(stored.trace_assertions, ['must_call:lookup', 'max_steps:5']);
  assert.deepEqual(stored.failure_modes, ['wrong city']);
  assert.deepEqual(stored.metadata, { suite: 'e2e', n: 1 });
  assert.deepEqual(stored.output, { answer: 'Rome' });
  assert.equal(stored.status, 'completed');

  assert.deepEqual(stored.steps.map((s) => [s.step_index, s.type, s.name]), [
    [0, 'llm_call', 'planner'], [1, 'tool_call', 'lookup'], [2, 'memory_write', 'remember'],
  ]);
  assert.equal(stored.steps[0].token_count, 42); // Anthropic usage sniffed
  assert.deepEqual(stored.steps[0].input, { question: 'capital of Italy?' });
  assert.ok(stored.steps[0].latency_ms >= 4, `latency ${stored.steps[0].latency_ms}`);
  assert.equal(stored.steps[1].cost_usd, 0.002); // from extract
  assert.equal(stored.steps[1].output, 'Rome');

  const grade = stored.grade;
  assert.equal(typeof grade.overall_score, 'number');
  assert.deepEqual(Object.keys(grade.axes).sort(), ['goal_completion', 'output_quality', 'safety', 'step_efficiency', 'tool_accuracy']);
  assert.deepEqual(grade.criteria_results.map((c) => c.criterion), ['Names Rome']);
  assert.deepEqual(grade.assertion_results.map((a) => [a.assertion, a.passed]), [['must_call:lookup', true], ['max_steps:5', true]]);
  reportPages.push([publicUrl, 'capital of Italy']);
});

test('e2e: many steps logged without awaiting arrive complete and in order', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl });
  const run = ap.startRun({ projectSlug: srv.project, input: 'burst' });
  const N = 60;
  const t0 = Date.now();
  for (let i = 0; i < N; i++) {
    if (i % 3 === 0) run.trace('tool_call', `step-${i}`, () => i); // not awaited either
    else run.logStep({ type: i % 2 ? 'llm_call' : 'tool_result', name: `step-${i}`, output: { i } });
  }
  assert.ok(Date.now() - t0 < 1000, 'logging did not wait for the server');
  await run.complete('done');
  const r = await api(srv, 'GET', `/runs/${run.remoteRunId}`);
  assert.equal(r.status, 200);
  assert.equal(r.body.steps.length, N);
  assert.deepEqual(r.body.steps.map((s) => s.step_index), [...Array(N).keys()]);
  assert.deepEqual(r.body.steps.map((s) => s.name), [...Array(N).keys()].map((i) => `step-${i}`));
  // (that they are also SENT one at a time, in order, is pinned in wire.test.mjs)
});

test('e2e: goldenId fills the run from the golden (explicit fields win)', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const g = await api(srv, 'POST', '/goldens', {
    id: 'e2e-golden-1', name: 'golden one', input: { q: 'from golden' }, goal: 'golden goal',
    expected_output: 'golden answer', success_criteria: ['golden criterion'],
  });
  assert.equal(g.status, 200, JSON.stringify(g.body));
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl });
  const run = ap.startRun({ projectSlug: srv.project, goldenId: 'e2e-golden-1', goal: 'explicit goal' });
  await run.trace('tool_call', 'x', () => 1);
  await run.complete('answer');
  const r = await api(srv, 'GET', `/runs/${run.remoteRunId}`);
  assert.equal(r.body.goldenId, 'e2e-golden-1');
  assert.deepEqual(r.body.input, { q: 'from golden' });
  assert.equal(r.body.goal, 'explicit goal');
  assert.equal(r.body.expected_output, 'golden answer');
  assert.deepEqual(r.body.success_criteria, ['golden criterion']);
});

test('e2e: proof suite — approved goldens only, async and sync handlers, pass/fail aggregated', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const goldens = [
    { id: 'ps-a', name: 'case a', input: { n: 2 }, goal: 'double it', expected_output: 4, approved: true },
    { id: 'ps-b', name: 'case b', input: { n: 5 }, goal: 'double it', expected_output: 10, success_criteria: ['is 10'], approved: true },
    { id: 'ps-c', name: 'case c', input: { n: 7 }, goal: 'double it', expected_output: 14, approved: true },
    { id: 'ps-draft', name: 'not approved', input: { n: 0 }, goal: 'double it', approved: false },
  ];
  for (const { approved, ...g } of goldens) {
    const res = await api(srv, 'POST', '/goldens', { ...g, suite: 'doubling', approved });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl });
  const seen = [];
  const caseRuns = [];
  const result = await ap.runProofSuite({
    projectSlug: srv.project,
    suiteSlug: 'doubling',
    async handler(input, ctx) {
      seen.push({ id: ctx.golden.id, input, expectedOutput: ctx.golden.expectedOutput, criteria: ctx.golden.successCriteria });
      const run = ctx.startRun({ metadata: { attempt: 1 } });
      caseRuns.push(run);
      const doubled = await run.trace('tool_call', 'double', async () => input.n * 2, input);
      if (input.n === 7) throw new Error('refusing sevens');
      await run.complete({ answer: doubled });
    },
  });
  assert.deepEqual(seen, [
    { id: 'ps-a', input: { n: 2 }, expectedOutput: 4, criteria: [] },
    { id: 'ps-b', input: { n: 5 }, expectedOutput: 10, criteria: ['is 10'] },
    { id: 'ps-c', input: { n: 7 }, expectedOutput: 14, criteria: [] },
  ]);
  assert.equal(result.passedCases, 2);
  assert.equal(result.failedCases, 1);
  assert.match(result.publicUrl, /^http:\/\/127\.0\.0\.1:\d+\/p\//);
  assert.ok(result.overallScore === null || (result.overallScore >= 0 && result.overallScore <= 1));
  reportPages.push([result.publicUrl, 'refusing sevens']);
  // each case's run is linked to its golden and graded with the golden's criteria
  const runB = await api(srv, 'GET', `/runs/${await caseRuns[1].getRemoteId()}`);
  assert.equal(runB.body.goldenId, 'ps-b');
  assert.deepEqual(runB.body.success_criteria, ['is 10']);
  assert.equal(runB.body.label, 'Proof case: case b');
  assert.deepEqual(runB.body.metadata, { attempt: 1, goldenId: 'ps-b', proofRunId: result.proofRunId });
  assert.deepEqual(runB.body.output, { answer: 10 });
  assert.deepEqual(runB.body.steps.map((x) => x.name), ['double']);
  const runC = await api(srv, 'GET', `/runs/${await caseRuns[2].getRemoteId()}`);
  assert.deepEqual(runC.body.output, { error: 'refusing sevens' }, 'the failed case\'s run was completed for it');
  const proofRunId = result.proofRunId;
  assert.ok(proofRunId);

  // a sync handler that returns its answer (the SDK completes the run with it)
  const syncResult = await ap.runProofSuite({
    projectSlug: srv.project,
    suiteSlug: 'doubling',
    handler: (input, ctx) => {
      ctx.startRun().logStep({ type: 'tool_call', name: 'double', output: input.n * 2 });
      return { answer: input.n * 2 };
    },
  });
  assert.equal(syncResult.passedCases, 3);
  assert.equal(syncResult.failedCases, 0);
  assert.notEqual(syncResult.proofRunId, proofRunId);
});

test('e2e: a proof suite that does not exist rejects with AgentsProofError 404', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl });
  await assert.rejects(ap.runProofSuite({ projectSlug: srv.project, suiteSlug: 'no-such-suite', handler: () => {} }),
    (e) => e instanceof AgentsProofError && e.status === 404);
});

test('e2e: wrong key — the agent runs to the end, complete() rejects with 401 unauthorized', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const errors = [];
  const ap = new AgentsProof({ apiKey: 'ap_not-a-real-key', baseUrl: srv.baseUrl, onError: (e, c) => errors.push([e, c]) });
  const run = ap.startRun({ projectSlug: srv.project, input: 'x' });
  assert.equal(await run.trace('llm_call', 'm', async () => 'still works'), 'still works');
  assert.equal(await run.trace('tool_call', 't', () => 2), 2);
  await run.logStep({ type: 'tool_result', output: 'ok' });
  await assert.rejects(run.complete('out'), (err) => {
    assert.ok(err instanceof AgentsProofError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, 'unauthorized');
    assert.match(err.message, /^AgentsProof: failed to complete run/);
    return true;
  });
  assert.equal(errors[0][1].op, 'startRun');
  assert.equal(errors[0][0].status, 401);
});

test('e2e: a key used for another project is refused (403) — again only complete() rejects', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl, onError: () => {} });
  const run = ap.startRun({ projectSlug: 'someone-elses-project', input: 'x' });
  assert.equal(await run.trace('tool_call', 't', () => 'fine'), 'fine');
  await assert.rejects(run.complete('out'), (err) => err instanceof AgentsProofError && err.status === 403 && err.code === 'unauthorized');
});

test('e2e: server down — trace/logStep return normally, complete() rejects as unreachable', async (t) => {
  // a port where the server is not running: no mock involved, nothing answers
  const port = await deadPort();
  const errors = [];
  const ap = new AgentsProof({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/api`, onError: (e, c) => errors.push(c.op) });
  const run = ap.startRun({ projectSlug: 'demo', input: 'x' });
  for (let i = 0; i < 5; i++) assert.equal(await run.trace('tool_call', `t${i}`, () => i), i);
  await run.logStep({ type: 'tool_result', output: 'ok' });
  await assert.rejects(run.complete('x'), (err) => err instanceof AgentsProofError && err.code === 'unreachable' && err.status === null);
  assert.deepEqual(errors, ['startRun']);
});

test('e2e: the README example agent runs against the server (goldens imported with the CLI)', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const imp = spawnSync(PYTHON, ['-m', 'agentsproof', 'golden', 'import', join(SDK_DIR, 'examples/goldens.jsonl'), '--project', srv.project, '--suite', 'capitals', '--approve', '--db', srv.info.db_url], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(imp.status, 0, imp.stderr);
  const out = spawnSync(process.execPath, ['examples/agent.mjs'], {
    cwd: SDK_DIR, encoding: 'utf8', timeout: 60_000,
    env: { ...process.env, AGENTSPROOF_API_KEY: srv.apiKey, AGENTSPROOF_BASE_URL: srv.baseUrl, AGENTSPROOF_PROJECT: srv.project },
  });
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stderr, '');
  assert.match(out.stdout, /run report: +http:\/\/127\.0\.0\.1:\d+\/r\//);
  assert.match(out.stdout, /proof suite: +2 passed, 0 failed -> http:\/\/127\.0\.0\.1:\d+\/p\//);
});

test('e2e: the publicUrl report pages of the runs and proof runs above are served', async (t) => {
  const srv = need(t);
  if (!srv) return;
  assert.equal(reportPages.length, 2, 'the tests above produced their URLs');
  for (const [url, text] of reportPages) {
    // a keep-alive connection pooled by an earlier test may have been closed by the server
    // meanwhile ("other side closed"): one fresh attempt, as a browser would
    let page;
    try { page = await fetch(url); } catch { page = await fetch(url); }
    assert.equal(page.status, 200, url);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok((await page.text()).includes(text), `${url} shows ${text}`);
  }
});

// keep last: it stops the shared server
test('e2e: the real server goes away mid-run — the agent carries on, complete() rejects', async (t) => {
  const srv = need(t);
  if (!srv) return;
  const errors = [];
  const ap = new AgentsProof({ apiKey: srv.apiKey, baseUrl: srv.baseUrl, onError: (e, c) => errors.push([c.op, e.code]) });
  const run = ap.startRun({ projectSlug: srv.project, input: 'x' });
  await run.trace('tool_call', 'before', () => 1);
  const { pending } = await run.flush(5000);
  assert.equal(pending, 0);
  await srv.stop();
  server = null;
  assert.equal(await run.trace('tool_call', 'after', async () => 'ok'), 'ok');
  run.logStep({ type: 'tool_result', name: 'after-2' });
  await assert.rejects(run.complete('x'), (err) => err instanceof AgentsProofError && err.code === 'unreachable');
  // the first failed step is reported; the next one is held (unacknowledged) for complete(), which spooled both
  assert.deepEqual(errors.filter(([op]) => op === 'logStep').map(([, code]) => code), ['unreachable']);
});
