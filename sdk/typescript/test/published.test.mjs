// The PUBLISHED npm agentsproof@1.0.6, unchanged, against our real server: runs, steps,
// complete and its proof-suite flow. Installed once into a cache folder outside the checkout
// (env AGENTSPROOF_PUBLISHED_DIR, default $TMPDIR/agentsproof-npm-1.0.6); needs the npm
// registry the first time.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, realServerMissing, startRealServer, unavailable, waitFor } from './helpers.mjs';

const PUBLISHED = '1.0.6';
const DIR = process.env.AGENTSPROOF_PUBLISHED_DIR || join(tmpdir(), `agentsproof-npm-${PUBLISHED}`);
const PKG = join(DIR, 'node_modules', 'agentsproof', 'package.json');

let server = null;
let startError = null;
let installError = null;
const missing = realServerMissing();

function installed() {
  try {
    return JSON.parse(readFileSync(PKG, 'utf8')).version === PUBLISHED;
  } catch {
    return false;
  }
}

before(async () => {
  if (!installed()) {
    mkdirSync(DIR, { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const out = spawnSync(npm, ['install', `agentsproof@${PUBLISHED}`, '--prefix', DIR, '--no-audit', '--no-fund', '--no-save', '--loglevel=error'], { encoding: 'utf8', timeout: 180_000 });
    if (out.status !== 0 || !installed()) installError = `npm install agentsproof@${PUBLISHED} failed: ${out.stderr || out.error}`;
  }
  if (missing || installError) return;
  try {
    server = await startRealServer();
  } catch (err) {
    startError = err;
  }
});
after(async () => { if (server) await server.stop(); });

function need(t) {
  if (unavailable(t, missing || installError)) return null;
  if (startError) throw startError;
  return server;
}

/** Run `body` as an ES module inside the published package's folder; returns its JSON output. */
function runPublished(srv, body) {
  const file = join(DIR, `check-${process.pid}-${Date.now()}.mjs`);
  writeFileSync(file, `import { AgentsProof } from 'agentsproof';\nconst ap = new AgentsProof({ apiKey: process.env.AP_KEY, baseUrl: process.env.AP_URL });\n${body}\n`);
  let out;
  try {
    out = spawnSync(process.execPath, [file], { cwd: DIR, encoding: 'utf8', timeout: 60_000, env: { ...process.env, AP_KEY: srv.apiKey, AP_URL: srv.baseUrl, AP_PROJECT: srv.project } });
  } finally {
    rmSync(file, { force: true });
  }
  assert.equal(out.status, 0, `published client failed:\n${out.stderr}`);
  const line = out.stdout.trim().split('\n').at(-1);
  return JSON.parse(line);
}

test(`published agentsproof@${PUBLISHED}: is really the published code`, (t) => {
  if (unavailable(t, installError)) return;
  const pkg = JSON.parse(readFileSync(PKG, 'utf8'));
  assert.equal(pkg.version, PUBLISHED);
  assert.ok(existsSync(join(DIR, 'node_modules', 'agentsproof', 'dist', 'index.js')));
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), ['nanoid']);
});

test(`published agentsproof@${PUBLISHED}: a traced run round-trips (steps in order, graded)`, async (t) => {
  const srv = need(t);
  if (!srv) return;
  const res = runPublished(srv, `
    const run = ap.startRun({ projectSlug: process.env.AP_PROJECT, label: 'published-ts', input: { q: 'hi' }, goal: 'greet', expectedOutput: 'hello', metadata: { via: 'npm-1.0.6' } });
    const a = await run.trace('llm_call', 'model', async () => ({ text: 'plan', usage: { total_tokens: 9 } }), { q: 'hi' });
    await run.trace('tool_call', 'search', async () => ['r1']);
    await run.logStep({ type: 'memory_write', name: 'remember', output: 'x', latency_ms: 2 });
    const done = await run.complete({ answer: 'hello' });
    console.log(JSON.stringify({ runId: await run.getRemoteId(), clientRunId: run.runId, ...done }));
  `);
  assert.match(res.publicUrl, /^http:\/\/127\.0\.0\.1:\d+\/r\//);
  // 1.0.6 sends steps fire-and-forget: they may land after complete
  const stored = await waitFor(async () => {
    const r = await api(srv, 'GET', `/runs/${res.runId}`);
    return r.status === 200 && r.body.steps.length === 3 && r.body.grade?.status === 'done' ? r.body : null;
  }, 30_000, 'steps and grade of the published client\'s run');
  assert.equal(stored.clientRunId, res.clientRunId);
  assert.equal(stored.label, 'published-ts');
  assert.equal(stored.goal, 'greet');
  assert.equal(stored.expected_output, 'hello');
  assert.deepEqual(stored.metadata, { via: 'npm-1.0.6' });
  assert.deepEqual(stored.output, { answer: 'hello' });
  assert.deepEqual(stored.steps.map((s) => [s.step_index, s.type, s.name]), [[0, 'llm_call', 'model'], [1, 'tool_call', 'search'], [2, 'memory_write', 'remember']]);
  assert.deepEqual(stored.steps[0].output, { text: 'plan', usage: { total_tokens: 9 } });
  assert.equal(typeof stored.grade.overall_score, 'number');
});

test(`published agentsproof@${PUBLISHED}: its proof-suite flow works (camelCase goldens, goldenId via metadata)`, async (t) => {
  const srv = need(t);
  if (!srv) return;
  for (const g of [
    { id: 'pub-1', name: 'pub one', input: { n: 1 }, goal: 'echo', expected_output: 1, success_criteria: ['echoes'], suite: 'pub-suite', approved: true },
    { id: 'pub-2', name: 'pub two', input: { n: 2 }, goal: 'echo', expected_output: 2, suite: 'pub-suite', approved: true },
  ]) {
    const r = await api(srv, 'POST', '/goldens', g);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const res = runPublished(srv, `
    const seen = [];
    const runs = [];
    const result = await ap.runProofSuite({
      projectSlug: process.env.AP_PROJECT,
      suiteSlug: 'pub-suite',
      async handler(input, ctx) {
        seen.push([ctx.golden.id, ctx.golden.name, ctx.golden.expectedOutput, ctx.golden.successCriteria]);
        const run = ctx.startRun();
        await run.trace('tool_call', 'echo', async () => input.n, input);
        if (input.n === 2) throw new Error('two is not allowed');
        await run.complete({ answer: input.n });
        runs.push(await run.getRemoteId());
      },
    });
    console.log(JSON.stringify({ result, seen, runs }));
  `);
  assert.deepEqual(res.seen, [['pub-1', 'pub one', 1, ['echoes']], ['pub-2', 'pub two', 2, []]]);
  assert.equal(res.result.passedCases, 1);
  assert.equal(res.result.failedCases, 1);
  assert.match(res.result.publicUrl, /^http:\/\/127\.0\.0\.1:\d+\/p\//);
  const stored = await api(srv, 'GET', `/runs/${res.runs[0]}`);
  assert.equal(stored.status, 200);
  assert.equal(stored.body.goldenId, 'pub-1', 'the golden is linked from metadata.goldenId');
  assert.deepEqual(stored.body.success_criteria, ['echoes'], 'the golden\'s criteria apply');
  assert.equal(stored.body.label, 'Proof case: pub one');
});

test(`published agentsproof@${PUBLISHED}: a wrong key fails as it always did (complete rejects with 401)`, async (t) => {
  const srv = need(t);
  if (!srv) return;
  const res = runPublished({ ...srv, apiKey: 'ap_wrong' }, `
    const run = ap.startRun({ projectSlug: process.env.AP_PROJECT, input: 1 });
    let message = null;
    try { await run.complete('x'); } catch (err) { message = err.message; }
    console.log(JSON.stringify({ message }));
  `);
  assert.match(res.message, /401/);
});
