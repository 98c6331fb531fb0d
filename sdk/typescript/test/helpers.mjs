// Test helpers: a recording loopback HTTP server (wire-shape tests only), the real Python
// server via tests/server/serverkit.py (end-to-end tests), and the skip-or-fail rule: a
// missing prerequisite skips the test locally and fails it when env CI is set.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SDK_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = resolve(SDK_DIR, '../..');
export const PYTHON = process.env.AGENTSPROOF_PYTHON || resolve(SDK_DIR, '../../.venv/bin/python');
export const SERVERKIT = resolve(REPO_DIR, 'tests/server/serverkit.py');
export const IN_CI = Boolean(process.env.CI);
// runs a test's complete() could not deliver are spooled here, never in the user's home
if (!process.env.AGENTSPROOF_SPOOL_DIR) process.env.AGENTSPROOF_SPOOL_DIR = mkdtempSync(join(tmpdir(), 'agentsproof-ts-spool-'));

/**
 * Skip `t` (or fail it under CI) when `reason` is set. Returns true when the caller must
 * return early.
 */
export function unavailable(t, reason) {
  if (!reason) return false;
  if (IN_CI) throw new Error(`prerequisite missing under CI: ${reason}`);
  t.skip(reason);
  return true;
}

export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Poll `fn` until it returns a truthy value (or throw after timeoutMs). */
export async function waitFor(fn, timeoutMs = 5000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A port on 127.0.0.1 that nothing listens on (for "server down"). */
export async function deadPort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * A loopback server that records every request and answers like the AgentsProof API.
 * `opts.status` forces a status for every request; `opts.stepDelayMs(stepIndex)` delays
 * step answers; `opts.cases` are the proof-suite cases served.
 */
export async function startRecorder(opts = {}) {
  const requests = [];
  let runCounter = 0;
  const srv = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body;
      try { body = raw ? JSON.parse(raw) : undefined; } catch { body = raw; }
      const url = new URL(req.url, 'http://x');
      const entry = { method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, raw, body, at: Date.now() };
      requests.push(entry);
      const send = (status, obj) => {
        const text = obj === undefined ? '' : JSON.stringify(obj);
        entry.answeredAt = Date.now();
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(text);
      };
      if (opts.status) return send(opts.status, { detail: 'Invalid API key' });
      const p = url.pathname.replace(/^\/api/, '');
      let m;
      if (req.method === 'POST' && p === '/runs') return send(200, { runId: `run-${++runCounter}` });
      if (req.method === 'POST' && (m = p.match(/^\/runs\/([^/]+)\/steps$/))) {
        if (opts.stepDelayMs) await sleep(opts.stepDelayMs(body && body.step_index));
        if (opts.stepStatus) {
          const status = opts.stepStatus(body && body.step_index, requests.filter((r) => r.raw === raw).length);
          if (status) return send(status, { detail: 'scripted failure' });
        }
        return send(200, { ok: true });
      }
      if (req.method === 'POST' && (m = p.match(/^\/runs\/([^/]+)\/complete$/))) return send(200, { publicUrl: `http://127.0.0.1/r/${m[1]}` });
      if (req.method === 'GET' && (m = p.match(/^\/proof-suites\/([^/]+)\/cases$/))) {
        return send(200, { proofRunId: 'proof-1', cases: opts.cases ?? [] });
      }
      if (req.method === 'POST' && /^\/proof-runs\/[^/]+\/case-results$/.test(p)) return send(200, { ok: true });
      if (req.method === 'POST' && /^\/proof-runs\/[^/]+\/complete$/.test(p)) {
        return send(200, { passedCases: 1, failedCases: 1, overallScore: 0.5, publicUrl: 'http://127.0.0.1/p/proof-1' });
      }
      return send(404, { detail: 'not found' });
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    requests,
    close: () => new Promise((r) => { srv.closeAllConnections?.(); srv.close(r); }),
  };
}

/** Why the real server cannot be started, or null. */
export function realServerMissing() {
  if (!existsSync(PYTHON)) return `no Python at ${PYTHON} (set AGENTSPROOF_PYTHON)`;
  if (!existsSync(SERVERKIT)) return `no ${SERVERKIT} (the server's test kit)`;
  return null;
}

/**
 * Start the real Python server on loopback through tests/server/serverkit.py.
 * Resolves to { baseUrl, apiKey, project, dir, info, stop() }. The same `dir` and `port` (with
 * `keepDir` on the first) restart a server on the same database.
 */
export async function startRealServer({ timeoutMs = 90_000, dir = null, port = null, keepDir = false } = {}) {
  dir = dir ?? mkdtempSync(join(tmpdir(), 'ap-ts-e2e-'));
  const child = spawn(PYTHON, [SERVERKIT, '--dir', dir, ...(port ? ['--port', String(port)] : [])], {
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  const info = await new Promise((resolveInfo, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`serverkit did not report within ${timeoutMs} ms\n${stderr}`)); }, timeoutMs);
    child.stdout.on('data', (d) => {
      out += d;
      for (const line of out.split('\n')) {
        const s = line.trim();
        if (!s.startsWith('{')) continue;
        try {
          const obj = JSON.parse(s);
          if (obj.base_url) { clearTimeout(timer); resolveInfo(obj); return; }
        } catch { /* partial line */ }
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`serverkit exited (${code}) before reporting\n${stderr}`)); });
  });
  child.removeAllListeners('exit');
  child.stdout.resume();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill("SIGKILL"), 30000);
      await exited;
      clearTimeout(t);
    }
    if (!keepDir) rmSync(dir, { recursive: true, force: true });
  };
  return {
    baseUrl: String(info.base_url).replace(/\/+$/, ''),
    apiKey: info.api_key,
    project: info.project,
    dir,
    info,
    child,
    stop,
    stderr: () => stderr,
  };
}

/** fetch JSON from the real server with the key; returns { status, body }. */
export async function api(server, method, path, body) {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': server.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = text; }
  return { status: res.status, body: parsed };
}
