// Spooled runs are re-sent at the next client's start (as the Python SDK does), to the REAL
// server (agentsproof serve via tests/server/serverkit.py); a run meant for another server is
// left alone; a file locked by another process (as `agentsproof sync` locks it) is not sent;
// resendSpooled: false turns it off; and a short script that constructs a client still exits
// on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentsProof, AgentsProofError } from '../lib/index.js';
import { PYTHON, SDK_DIR, api, realServerMissing, startRealServer, unavailable, waitFor } from './helpers.mjs';

const missing = realServerMissing();

/** Await `client.resent` (it holds nothing that keeps the process alive, by design: a timer does here). */
async function resent(client) {
  const keep = setInterval(() => {}, 1000);
  try {
    return await client.resent;
  } finally {
    clearInterval(keep);
  }
}

/** Spool one run for `server` while it is down (complete() cannot deliver it). */
async function spoolWhileDown(server, spoolDir, clientRunId) {
  const run = new AgentsProof({ apiKey: server.apiKey, baseUrl: server.baseUrl, completeTimeoutMs: 1500, spoolDir, resendSpooled: false })
    .startRun({ projectSlug: server.project, input: 'offline', clientRunId });
  run.logStep({ type: 'tool_call', name: 's1', input: 1, output: 2 });
  const err = await run.complete('offline answer').then(() => null, (e) => e);
  assert.ok(err instanceof AgentsProofError && err.spooled === join(spoolDir, `${clientRunId}.json`), String(err));
  return err.spooled;
}

async function storedRun(server, clientRunId) {
  const mine = await api(server, 'POST', '/runs', { projectSlug: server.project, clientRunId }); // the same clientRunId: the same run
  assert.equal(mine.status, 200, JSON.stringify(mine.body));
  const r = await api(server, 'GET', `/runs/${mine.body.runId}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test('a run spooled while the server was down is delivered by the next client\'s start; another server\'s run is left alone', { timeout: 240_000 }, async (t) => {
  if (unavailable(t, missing)) return;
  const dir = mkdtempSync(join(tmpdir(), 'ap-ts-resend-'));
  const spoolDir = mkdtempSync(join(tmpdir(), 'ap-ts-resend-spool-'));
  let server = await startRealServer({ dir, keepDir: true });
  const port = new URL(server.baseUrl).port;
  const { apiKey, project } = server;
  try {
    await server.stop();
    const file = await spoolWhileDown({ ...server, apiKey, project }, spoolDir, 'resend-1');
    const record = JSON.parse(readFileSync(file, 'utf8'));
    const other = join(spoolDir, 'elsewhere.json');
    writeFileSync(other, JSON.stringify({ ...record, baseUrl: 'http://127.0.0.1:9/api', run: { ...record.run, clientRunId: 'elsewhere' } }));
    // while the server is still down, a client's start keeps the file (and stops at it)
    const down = await resent(new AgentsProof({ apiKey, baseUrl: server.baseUrl, spoolDir, requestTimeoutMs: 2000 }));
    assert.equal(down.length, 1, JSON.stringify(down));
    assert.ok(!down[0].ok && /^kept for the next sync/.test(down[0].message), down[0].message);
    assert.ok(existsSync(file));

    server = await startRealServer({ dir, port, keepDir: true });
    const client = new AgentsProof({ apiKey, baseUrl: server.baseUrl, spoolDir }); // returns at once; the upload runs in the background
    const results = await resent(client);
    assert.equal(results.length, 1, JSON.stringify(results));
    assert.ok(results[0].ok, results[0].message);
    assert.ok(!existsSync(file), 'a delivered run leaves the spool');
    assert.ok(existsSync(other), 'a run meant for another server is left alone');
    const stored = await storedRun({ ...server, apiKey }, 'resend-1');
    assert.equal(stored.status, 'completed');
    assert.equal(stored.output, 'offline answer');
    assert.deepEqual(stored.steps.map((s) => s.name), ['s1']);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(spoolDir, { recursive: true, force: true });
  }
});

test('a file locked by another process (the lock `agentsproof sync` takes) is not sent; resendSpooled: false sends nothing', { timeout: 240_000 }, async (t) => {
  if (unavailable(t, missing)) return;
  const dir = mkdtempSync(join(tmpdir(), 'ap-ts-resend-lock-'));
  const spoolDir = mkdtempSync(join(tmpdir(), 'ap-ts-resend-lock-spool-'));
  let server = await startRealServer({ dir, keepDir: true });
  const port = new URL(server.baseUrl).port;
  const { apiKey, project } = server;
  let holder = null;
  try {
    await server.stop();
    const file = await spoolWhileDown({ ...server, apiKey, project }, spoolDir, 'resend-locked');
    server = await startRealServer({ dir, port, keepDir: true });
    assert.deepEqual(await resent(new AgentsProof({ apiKey, baseUrl: server.baseUrl, spoolDir, resendSpooled: false })), []);
    assert.ok(existsSync(file));
    // Python holds the file the way agentsproof.sdk.spool._locked does, until its stdin closes
    holder = spawn(PYTHON, ['-c', [
      'import fcntl, os, sys',
      'fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NOFOLLOW)',
      'fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)',
      'print("locked", flush=True)',
      'sys.stdin.read()',
    ].join('\n'), file], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((resolve, reject) => {
      holder.stdout.on('data', (d) => { if (String(d).includes('locked')) resolve(); });
      holder.on('exit', (code) => reject(new Error(`lock holder exited ${code}`)));
    });
    const busy = await resent(new AgentsProof({ apiKey, baseUrl: server.baseUrl, spoolDir }));
    assert.deepEqual(busy.map((r) => [r.ok, r.message]), [[false, 'being sent by another process']]);
    assert.ok(existsSync(file));
    holder.removeAllListeners('exit');
    const released = new Promise((r) => holder.once('exit', r));
    holder.stdin.end();
    await released;
    holder = null;
    const sent = await resent(new AgentsProof({ apiKey, baseUrl: server.baseUrl, spoolDir }));
    assert.ok(sent.length === 1 && sent[0].ok, JSON.stringify(sent));
    assert.equal((await storedRun({ ...server, apiKey }, 'resend-locked')).status, 'completed');
  } finally {
    if (holder) holder.kill();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(spoolDir, { recursive: true, force: true });
  }
});

test('a script that constructs a client (re-sending to a server that never answers) still exits on its own', { timeout: 120_000 }, async (t) => {
  // a server that accepts connections and never answers: the re-send stays in flight
  const { createServer } = await import('node:net');
  const sockets = [];
  const hung = createServer((s) => { sockets.push(s); s.resume(); });
  await new Promise((r) => hung.listen(0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${hung.address().port}/api`;
  const spoolDir = mkdtempSync(join(tmpdir(), 'ap-ts-resend-exit-'));
  t.after(() => { for (const s of sockets) s.destroy(); hung.close(); rmSync(spoolDir, { recursive: true, force: true }); });
  const record = { format: 'agentsproof-spool/1', baseUrl, run: { clientRunId: 'exit-1', projectSlug: 'p', input: 1 }, steps: [], completed: true, output: 'x' };
  writeFileSync(join(spoolDir, 'exit-1.json'), JSON.stringify(record), { mode: 0o600 });
  // the script stays up (its stdin open) until the re-send is in flight, then has nothing of its own left to do
  const script = `import { AgentsProof } from ${JSON.stringify(join(SDK_DIR, 'lib/index.js'))};
new AgentsProof({ apiKey: 'k', baseUrl: ${JSON.stringify(baseUrl)}, spoolDir: ${JSON.stringify(spoolDir)}, requestTimeoutMs: 600000 });
process.stdin.resume();
process.stdin.on('end', () => console.log('stdin closed'));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise((r) => child.on('exit', (c, s) => r([c, s])));
  await waitFor(() => sockets.length >= 1, 30_000, 'the re-send to reach the server');
  child.stdin.end();
  // a generous bound that only a script kept alive by the in-flight re-send (10 min request timeout) reaches
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code, signal] = await exited;
  clearTimeout(killer);
  assert.equal(signal, null, `the script was kept alive by the re-send and had to be killed\n${out}`);
  assert.equal(code, 0, out);
  assert.match(out, /stdin closed/);
  assert.ok(existsSync(join(spoolDir, 'exit-1.json')), 'the run is still spooled for the next start');
});

