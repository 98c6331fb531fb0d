// Nothing lost: 1,000 steps across a restart of the REAL server (agentsproof serve via
// tests/server/serverkit.py) are all stored — resent by complete(), or spooled when the
// server is still down and uploaded by `agentsproof sync`; complete() on a server that
// accepts connections but never answers returns within completeTimeoutMs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsProof, AgentsProofError } from '../lib/index.js';
import { PYTHON, REPO_DIR, api, realServerMissing, startRealServer, unavailable } from './helpers.mjs';

const missing = realServerMissing();

async function storedSteps(server, runId) {
  const r = await api(server, 'GET', `/runs/${runId}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.steps.map((s) => s.step_index);
}

function logSteps(run, from, to) {
  for (let i = from; i < to; i++) run.logStep({ type: 'tool_call', name: `s${i}`, input: { i }, output: i });
}

test('1,000 steps across a server restart: all stored, complete() resends what was lost', { timeout: 240_000 }, async (t) => {
  if (unavailable(t, missing)) return;
  const dir = mkdtempSync(join(tmpdir(), 'ap-ts-restart-'));
  let server = await startRealServer({ dir, keepDir: true });
  const port = new URL(server.baseUrl).port;
  const { apiKey, baseUrl } = server;
  try {
    const run = new AgentsProof({ apiKey, baseUrl, requestTimeoutMs: 3000, completeTimeoutMs: 120_000 }).startRun({ projectSlug: server.project, input: 'restart' });
    logSteps(run, 0, 300);
    await run.flush(60_000);
    await server.stop(); // the server goes away mid-run
    logSteps(run, 300, 700);
    await run.flush(20_000);
    server = await startRealServer({ dir, port, keepDir: true }); // back, same database
    logSteps(run, 700, 1000);
    const { publicUrl } = await run.complete({ done: true });
    assert.match(publicUrl, /\/r\/[0-9a-f]{32}$/);
    const stored = await storedSteps({ ...server, apiKey }, run.remoteRunId);
    assert.equal(stored.length, 1000);
    assert.deepEqual(stored, [...Array(1000).keys()]);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('server still down at complete(): the run is spooled with every step and `agentsproof sync` uploads all 1,000', { timeout: 240_000 }, async (t) => {
  if (unavailable(t, missing)) return;
  const dir = mkdtempSync(join(tmpdir(), 'ap-ts-spool-'));
  const spoolDir = mkdtempSync(join(tmpdir(), 'ap-ts-spooldir-'));
  let server = await startRealServer({ dir, keepDir: true });
  const port = new URL(server.baseUrl).port;
  const { apiKey, baseUrl } = server;
  try {
    const run = new AgentsProof({ apiKey, baseUrl, requestTimeoutMs: 3000, completeTimeoutMs: 5000, spoolDir }).startRun({ projectSlug: server.project, input: 'spool' });
    logSteps(run, 0, 500);
    await run.flush(60_000);
    await server.stop();
    logSteps(run, 500, 1000);
    const err = await run.complete('out').then(() => null, (e) => e);
    assert.ok(err instanceof AgentsProofError, String(err));
    assert.ok(err.spooled && err.spooled.startsWith(spoolDir), err.message);
    assert.match(err.message, /agentsproof sync/);
    const record = JSON.parse(readFileSync(err.spooled, 'utf8'));
    assert.equal(record.format, 'agentsproof-spool/1');
    assert.ok(!readFileSync(err.spooled, 'utf8').includes(apiKey), 'the key is never spooled');
    assert.ok(record.steps.length >= 500, `${record.steps.length} unacknowledged steps spooled`);
    server = await startRealServer({ dir, port, keepDir: true });
    const sync = spawnSync(PYTHON, ['-m', 'agentsproof', 'sync', '--base-url', baseUrl], {
      cwd: REPO_DIR, encoding: 'utf8', env: { ...process.env, AGENTSPROOF_API_KEY: apiKey, AGENTSPROOF_SPOOL_DIR: spoolDir }, timeout: 120_000,
    });
    assert.equal(sync.status, 0, sync.stderr + sync.stdout);
    const stored = await storedSteps({ ...server, apiKey }, run.remoteRunId);
    assert.deepEqual(stored, [...Array(1000).keys()]);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(spoolDir, { recursive: true, force: true });
  }
});

test('a hung server (accepts, never answers): complete() settles within completeTimeoutMs, run spooled', async (t) => {
  const sockets = [];
  const hung = createServer((s) => { sockets.push(s); s.resume(); });
  await new Promise((r) => hung.listen(0, '127.0.0.1', r));
  const spoolDir = mkdtempSync(join(tmpdir(), 'ap-ts-hung-'));
  t.after(() => { for (const s of sockets) s.destroy(); hung.close(); rmSync(spoolDir, { recursive: true, force: true }); });
  const run = new AgentsProof({ apiKey: 'k', baseUrl: `http://127.0.0.1:${hung.address().port}/api`, completeTimeoutMs: 1500, spoolDir })
    .startRun({ projectSlug: 'p', input: 1, clientRunId: 'hung-run' });
  logSteps(run, 0, 5);
  const t0 = Date.now();
  const err = await run.complete('x').then(() => null, (e) => e);
  const took = Date.now() - t0;
  assert.ok(took < 2500, `complete() took ${took} ms with completeTimeoutMs 1500`);
  assert.ok(err instanceof AgentsProofError && err.code === 'timeout', String(err));
  assert.equal(err.spooled, join(spoolDir, 'hung-run.json'));
  const record = JSON.parse(readFileSync(err.spooled, 'utf8'));
  assert.deepEqual(record.steps.map((s) => s.name), ['s0', 's1', 's2', 's3', 's4']);
  assert.equal(record.completed, true);
});
