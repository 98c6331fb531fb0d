'use strict';
// GENERATED from index.js by scripts/build-cjs.mjs — do not edit.
// agentsproof — the TypeScript/JavaScript SDK. Plain ESM, no dependencies: the platform's
// fetch (Node 20+). lib/index.cjs is generated from this file by scripts/build-cjs.mjs;
// edit this file, then run `npm run build`.
//
// Wire protocol (the published agentsproof@1.0.6, unchanged), under baseUrl, header x-api-key:
//   POST /runs                            camelCase run body          -> { runId }
//   POST /runs/{id}/steps                 snake_case step body
//   POST /runs/{id}/complete              { output }                  -> { publicUrl }
//   GET  /proof-suites/{slug}/cases?projectSlug=                      -> { proofRunId, cases }
//   POST /proof-runs/{id}/case-results    { goldenId, runId, score, passed, failureSummary }
//   POST /proof-runs/{id}/complete        (no body)                   -> { passedCases, ... }
//
// The promise to the host agent: nothing here throws into the agent while it works.
// startRun/trace/logStep never reject because of AgentsProof (a traced function's own
// error is re-thrown unchanged); delivery failures go to onError. Only the explicit
// result calls — complete() and runProofSuite() — reject, with an AgentsProofError.

const DEFAULT_BASE_URL = 'http://127.0.0.1:8787/api';
const VERSION = '1.1.0';

const STEP_RETRY_DELAY_MS = 250;
const STEP_TYPES = new Set(['llm_call', 'tool_call', 'tool_result', 'memory_read', 'memory_write']);
const OFFLINE_MS = 1000;
const UNREACHABLE_GRACE_MS = 3000; // complete() retries a server that refuses connections this long, then spools // after a failed step send, later steps wait for complete() this long
const DEFAULTS = {
  requestTimeoutMs: 10_000, // run creation and each step
  completeTimeoutMs: 30_000, // the whole of complete() (it never takes longer), proof-suite calls
  flushTimeoutMs: 10_000, // how long complete() waits for pending steps (within completeTimeoutMs)
  maxPendingSteps: 1000, // per run in flight; further steps wait for complete() (reported through onError)
};
const SPOOL_FORMAT = 'agentsproof-spool/1';

function retryable(err) {
  const status = err && err.status;
  return !status || status === 401 || status === 403 || status === 408 || status === 429 || status >= 500;
}

/** The spool folder shared with the Python SDK (`agentsproof sync` uploads what is in it). */
function spoolDir(nodePath, os, option) {
  if (option) return option;
  const fromEnv = env('AGENTSPROOF_SPOOL_DIR');
  if (fromEnv) return fromEnv;
  const state = env('XDG_STATE_HOME') || nodePath.join(os.homedir(), '.local', 'state');
  return nodePath.join(state, 'agentsproof', 'spool');
}

function safeBaseUrl(url) {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '';
  }
}

/**
 * Write one undelivered run where `agentsproof sync` finds it (owner-only file, atomic rename).
 * Resolves to its path, or null where there is no file system (browsers) or it refused.
 */
async function writeSpool(record, option) {
  try {
    const fs = await import('node:fs/promises');
    const nodePath = await import('node:path');
    const os = await import('node:os');
    const dir = spoolDir(nodePath, os, option);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const name = String(record.run.clientRunId || 'run').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
    const file = nodePath.join(dir, `${name}.json`);
    const tmp = nodePath.join(dir, `.spool-${name}-${randomId(6)}.tmp`);
    await fs.writeFile(tmp, safeStringify({ format: SPOOL_FORMAT, spooledAt: new Date().toISOString(), ...record }), { mode: 0o600 });
    await fs.rename(tmp, file);
    return file;
  } catch {
    return null;
  }
}

/** The one error type this SDK rejects with (from complete() and runProofSuite() only). */
class AgentsProofError extends Error {
  /**
   * @param {string} message
   * @param {{status?: number|null, code?: string, body?: unknown, cause?: unknown}} [info]
   */
  constructor(message, info = {}) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = 'AgentsProofError';
    /** HTTP status, or null when the server was not reached. */
    this.status = info.status ?? null;
    /** 'unauthorized' | 'http_error' | 'unreachable' | 'timeout' | 'bad_response' | 'bad_request' | 'queue_full' */
    this.code = info.code ?? 'http_error';
    this.body = info.body;
  }
}

function env(name) {
  try {
    const v = globalThis.process?.env?.[name];
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
  } catch {
    return undefined;
  }
}

function normaliseBaseUrl(url) {
  return String(url).trim().replace(/\/+$/, '');
}

/** JSON text for any value: never throws (BigInt, cycles, Map/Set, Errors, class instances). */
function safeStringify(value) {
  const seen = new WeakSet();
  const replacer = function (key, v) {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'function' || typeof v === 'symbol') return undefined;
    if (v instanceof Error) {
      const out = { name: v.name, message: v.message };
      if (v.code !== undefined) out.code = v.code;
      return out;
    }
    if (v instanceof Map) return Object.fromEntries(v);
    if (v instanceof Set) return Array.from(v);
    if (typeof v === 'number' && !Number.isFinite(v)) return null;
    if (v !== null && typeof v === 'object') {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  };
  try {
    const text = JSON.stringify(value, replacer);
    return text === undefined ? 'null' : text;
  } catch (err) {
    // a throwing toJSON or getter: fall back to a description, never to an exception
    try {
      return JSON.stringify(String(value));
    } catch {
      return JSON.stringify(`[unserialisable: ${err && err.message}]`);
    }
  }
}

function get(obj, key) {
  if (obj === null || obj === undefined) return undefined;
  if (obj instanceof Map) return obj.get(key);
  if (typeof obj !== 'object' && typeof obj !== 'function') return undefined;
  return obj[key];
}

function count(v) {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function amount(v) {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

function priceFor(prices, model) {
  if (!prices || typeof model !== 'string') return undefined;
  const table = prices instanceof Map ? Object.fromEntries(prices) : prices;
  if (Object.prototype.hasOwnProperty.call(table, model)) return table[model];
  // dated snapshots ("gpt-4o-2024-08-06") fall back to the longest matching prefix
  const key = Object.keys(table).filter((k) => model.startsWith(k)).sort((a, b) => b.length - a.length)[0];
  return key === undefined ? undefined : table[key];
}

/**
 * Token count (and cost, when derivable) from well-known LLM response shapes:
 * `output.usage` with Anthropic's / OpenAI Responses' input_tokens + output_tokens, or
 * OpenAI-compatible total_tokens, or prompt_tokens + completion_tokens (and the camelCase
 * spellings of the Vercel AI SDK). Cost: a cost_usd / cost / total_cost number in the usage
 * block (OpenRouter, LiteLLM-style proxies), else `prices[output.model]` (USD per million
 * input and output tokens). {} when nothing is known.
 * @returns {{token_count?: number, cost_usd?: number}}
 */
function sniffUsage(output, prices) {
  try {
    const usage = get(output, 'usage');
    if (usage === null || usage === undefined || typeof usage !== 'object') return {};
    const found = {};
    let tin;
    let tout;
    const pairs = [['input_tokens', 'output_tokens'], ['prompt_tokens', 'completion_tokens'], ['inputTokens', 'outputTokens'], ['promptTokens', 'completionTokens']];
    const first = count(get(usage, 'input_tokens'));
    const second = count(get(usage, 'output_tokens'));
    if (first !== undefined && second !== undefined) {
      found.token_count = first + second;
    } else {
      const total = count(get(usage, 'total_tokens')) ?? count(get(usage, 'totalTokens'));
      if (total !== undefined) found.token_count = total;
    }
    for (const [a, b] of pairs) {
      const x = count(get(usage, a));
      const y = count(get(usage, b));
      if (x !== undefined && y !== undefined) {
        tin = x;
        tout = y;
        if (found.token_count === undefined) found.token_count = x + y;
        break;
      }
    }
    for (const key of ['cost_usd', 'cost', 'total_cost']) {
      const c = amount(get(usage, key));
      if (c !== undefined) {
        found.cost_usd = c;
        break;
      }
    }
    if (found.cost_usd === undefined && tin !== undefined) {
      const price = priceFor(prices, get(output, 'model'));
      if (Array.isArray(price) && amount(price[0]) !== undefined && amount(price[1]) !== undefined) {
        found.cost_usd = Math.round(((tin * price[0] + tout * price[1]) / 1_000_000) * 1e10) / 1e10;
      }
    }
    return found;
  } catch {
    // a getter that throws is not our agent's problem
    return {};
  }
}

function usageFromExtract(extracted) {
  const out = {};
  if (!extracted || typeof extracted !== 'object') return out;
  const tokens = extracted.token_count ?? extracted.tokenCount;
  const cost = extracted.cost_usd ?? extracted.costUsd;
  if (typeof tokens === 'number' && Number.isFinite(tokens)) out.token_count = Math.round(tokens);
  if (typeof cost === 'number' && Number.isFinite(cost)) out.cost_usd = cost;
  return out;
}

function now() {
  return globalThis.performance?.now ? globalThis.performance.now() : Date.now();
}

function randomId(length = 12) {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-';
  const bytes = new Uint8Array(length);
  globalThis.crypto.getRandomValues(bytes);
  let id = '';
  for (const b of bytes) id += alphabet[b & 63];
  return id;
}

function report(onError, error, context) {
  if (typeof onError !== 'function') return;
  try {
    const r = onError(error, context);
    if (r && typeof r.catch === 'function') r.catch(() => {});
  } catch {
    // the error callback must not break the agent either
  }
}

function errorFromResponse(what, status, body) {
  const detail = body && typeof body === 'object' && body.detail !== undefined
    ? ` (${typeof body.detail === 'string' ? body.detail : safeStringify(body.detail)})`
    : '';
  return new AgentsProofError(`AgentsProof: failed to ${what} \u2014 ${status}${detail}`, {
    status,
    code: status === 401 || status === 403 ? 'unauthorized' : 'http_error',
    body,
  });
}

function errorFromException(what, err) {
  const timeout = err && (err.name === 'TimeoutError' || err.name === 'AbortError');
  const reason = timeout ? 'timed out' : `server unreachable (${(err && err.cause && err.cause.code) || (err && err.message) || err})`;
  return new AgentsProofError(`AgentsProof: failed to ${what} \u2014 ${reason}`, {
    status: null,
    code: timeout ? 'timeout' : 'unreachable',
    cause: err,
  });
}

async function readBody(res) {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * One HTTP exchange. Resolves to the parsed JSON body; rejects with AgentsProofError.
 * @param {{baseUrl: string, apiKey: string}} conn
 */
async function request(conn, what, method, path, body, timeoutMs) {
  const headers = { 'x-api-key': conn.apiKey ?? '' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : safeStringify(body);
  }
  if (timeoutMs && typeof AbortSignal !== 'undefined' && AbortSignal.timeout) {
    init.signal = AbortSignal.timeout(timeoutMs);
  }
  let res;
  let data;
  try {
    res = await fetch(`${conn.baseUrl}${path}`, init);
    data = await readBody(res);
  } catch (err) {
    throw errorFromException(what, err);
  }
  if (!res.ok) throw errorFromResponse(what, res.status, data);
  return data;
}

function compact(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One traced run. Created by `client.startRun()`; the run is registered on the server in the
 * background, steps are queued and sent one at a time, in order, after it.
 */
class AgentRun {
  /**
   * @param {object} opts RunOptions plus apiKey, baseUrl (and optionally onError, timeouts)
   */
  constructor(opts = {}) {
    const o = opts ?? {};
    this._conn = {
      apiKey: o.apiKey ?? env('AGENTSPROOF_API_KEY') ?? '',
      baseUrl: normaliseBaseUrl(o.baseUrl ?? env('AGENTSPROOF_BASE_URL') ?? DEFAULT_BASE_URL),
    };
    this._onError = o.onError;
    this._prices = o.prices;
    this._cfg = {
      requestTimeoutMs: o.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      completeTimeoutMs: o.completeTimeoutMs ?? DEFAULTS.completeTimeoutMs,
      flushTimeoutMs: o.flushTimeoutMs ?? DEFAULTS.flushTimeoutMs,
      maxPendingSteps: o.maxPendingSteps ?? DEFAULTS.maxPendingSteps,
    };
    /** The client-side id of this run (sent as clientRunId). */
    this.runId = o.clientRunId ?? randomId(12);
    this.steps = [];
    this.startedAt = Date.now();
    this._remoteRunId = null;
    this._initError = null;
    this._pending = 0;
    this._dropped = 0;
    this._completed = null; // the promise of complete(), once called
    this._publicUrl = null;
    this._unacked = new Map(); // step_index -> JSON body, until the server has answered for it
    this._offlineUntil = 0;
    this._spoolDir = o.spoolDir;
    this._runBody = null;

    let body;
    try {
      body = safeStringify(compact({
        label: o.label,
        input: o.input,
        projectSlug: o.projectSlug,
        clientRunId: this.runId,
        goldenId: o.goldenId,
        goal: o.goal,
        expectedOutput: o.expectedOutput,
        expectedBehavior: o.expectedBehavior,
        successCriteria: o.successCriteria,
        traceAssertions: o.traceAssertions,
        failureModes: o.failureModes,
        metadata: o.metadata ?? {},
      }));
    } catch (err) {
      body = undefined;
      this._initError = new AgentsProofError(`AgentsProof: failed to init run \u2014 ${err}`, { code: 'bad_request' });
    }
    this._runBody = body;
    // never rejects: the outcome is kept in _remoteRunId / _initError
    this._init = body === undefined
      ? Promise.resolve()
      : this._register(this._cfg.requestTimeoutMs);
    this._tail = this._init; // the chain that sends steps in order
  }

  /** POST /runs (idempotent: the server maps a repeated clientRunId to the same run). Never rejects. */
  _register(timeoutMs, quiet = false) {
    this._initError = null;
    return request(this._conn, 'init run', 'POST', '/runs', this._runBody, timeoutMs).then(
        (data) => {
          const id = data && typeof data === 'object' ? data.runId ?? data.id : undefined;
          if (id === undefined || id === null) {
            throw new AgentsProofError('AgentsProof: failed to init run \u2014 no runId in the response', {
              status: 200, code: 'bad_response', body: data,
            });
          }
          this._remoteRunId = String(id);
        },
      ).catch((err) => {
        this._initError = err;
        if (!quiet) report(this._onError, err, { op: 'startRun', runId: this.runId });
      });
  }

  /** The server's id of this run once it is registered (null if registration failed). */
  async getRemoteId() {
    await this._init;
    return this._remoteRunId;
  }

  /** The server's id, or null while (or if never) registered. */
  get remoteRunId() {
    return this._remoteRunId;
  }

  /** The public report URL once complete() has succeeded. */
  get publicUrl() {
    return this._publicUrl;
  }

  get elapsedMs() {
    return Date.now() - this.startedAt;
  }

  /** Steps queued or in flight, not yet answered by the server. */
  get pendingSteps() {
    return this._pending;
  }

  /**
   * Log a step without wrapping a function. Returns at once (the promise resolves
   * immediately); the step is sent in the background, after the steps logged before it.
   * Never throws and never rejects.
   */
  logStep(payload) {
    try {
      this._enqueue(payload);
    } catch (err) {
      report(this._onError, err, { op: 'logStep', runId: this.runId });
    }
    return Promise.resolve();
  }

  _enqueue(payload) {
    const p = payload && typeof payload === 'object' ? payload : { type: 'tool_call', output: payload };
    const stepIndex = this.steps.length;
    const step = compact({
      type: p.type,
      name: p.name,
      input: p.input,
      output: p.output,
      latency_ms: p.latency_ms ?? p.latencyMs,
      token_count: p.token_count ?? p.tokenCount,
      cost_usd: p.cost_usd ?? p.costUsd,
      step_index: stepIndex,
      created_at: new Date().toISOString(),
    });
    if (!STEP_TYPES.has(step.type)) {
      report(this._onError, new AgentsProofError(`AgentsProof: unknown step type ${safeStringify(step.type)}`, { code: 'bad_request' }), { op: 'logStep', runId: this.runId, step: stepIndex });
    }
    this.steps.push(step);
    // serialise now: later mutations of the agent's objects do not change what was logged
    const body = safeStringify(step);
    this._unacked.set(stepIndex, body); // kept until the server answers for it: complete() sends what is left
    if (this._pending >= this._cfg.maxPendingSteps) {
      report(this._onError, new AgentsProofError(`AgentsProof: step ${stepIndex} held for complete() \u2014 ${this._pending} steps already pending`, { code: 'queue_full' }), { op: 'logStep', runId: this.runId, step: stepIndex });
      return;
    }
    this._pending += 1;
    this._tail = this._tail.then(() => this._send(body, stepIndex)).finally(() => {
      this._pending -= 1;
    });
  }

  async _send(body, stepIndex) {
    // registration failed, or the server just failed: the step stays unacknowledged for complete()
    if (this._remoteRunId === null || Date.now() < this._offlineUntil) return;
    try {
      try {
        await this._post(body, stepIndex, this._cfg.requestTimeoutMs);
      } catch (err) {
        // one retry in place for a refused connection or a server error: the server ignores
        // a step_index it already has, so a retry never duplicates a step
        if (!(err && (err.code === 'unreachable' || (err.status ?? 0) >= 500))) throw err;
        await sleep(STEP_RETRY_DELAY_MS);
        await this._post(body, stepIndex, this._cfg.requestTimeoutMs);
      }
    } catch (err) {
      if (retryable(err)) this._offlineUntil = Date.now() + OFFLINE_MS;
      report(this._onError, err, { op: 'logStep', runId: this.runId, step: stepIndex });
    }
  }

  /** Send one step; an answer (2xx, or a refusal that retrying cannot fix) acknowledges it. */
  async _post(body, stepIndex, timeoutMs) {
    try {
      await request(this._conn, `log step ${stepIndex}`, 'POST', `/runs/${encodeURIComponent(this._remoteRunId)}/steps`, body, timeoutMs);
    } catch (err) {
      if (retryable(err)) throw err;
      this._dropped += 1; // refused for good (e.g. 422): it will not get better by sending again
      this._unacked.delete(stepIndex);
      throw err;
    }
    this._unacked.delete(stepIndex);
  }

  /**
   * Run `fn` (sync or async) and log it as a step with its latency, output and — from
   * options.extract, else the usage of an OpenAI/Anthropic response — tokens and cost.
   * Returns fn's result; an error thrown by fn is logged as the step's output and re-thrown.
   * @param {string} type
   * @param {string} name
   * @param {() => any} fn
   * @param {unknown} [input]
   * @param {{extract?: (output: any) => {token_count?: number, cost_usd?: number}}} [options]
   */
  trace(type, name, fn, input, options) {
    const t0 = now();
    const failed = (err) => {
      this.logStep({
        type, name, input,
        output: { error: err instanceof Error ? String(err) : safeStringify(err) },
        latency_ms: Math.round((now() - t0) * 1000) / 1000,
      });
      throw err;
    };
    let result;
    try {
      result = fn();
    } catch (err) {
      try { failed(err); } catch (e) { return Promise.reject(e); }
    }
    if (result !== null && (typeof result === 'object' || typeof result === 'function') && typeof result.then === 'function') {
      return Promise.resolve(result).then((output) => this._traced(type, name, input, options, t0, output), failed);
    }
    // a sync function: its step is queued before trace returns, so call order is step order
    return Promise.resolve(this._traced(type, name, input, options, t0, result));
  }

  _traced(type, name, input, options, t0, output) {
    const latency = Math.round((now() - t0) * 1000) / 1000;
    let usage = {};
    const extract = options && typeof options === 'object' ? options.extract : undefined;
    if (typeof extract === 'function') {
      try {
        usage = usageFromExtract(extract(output));
      } catch (err) {
        report(this._onError, err, { op: 'extract', runId: this.runId });
      }
    }
    if (usage.token_count === undefined || usage.cost_usd === undefined) {
      const sniffed = sniffUsage(output, this._prices);
      if (usage.token_count === undefined && sniffed.token_count !== undefined) usage.token_count = sniffed.token_count;
      if (usage.cost_usd === undefined && sniffed.cost_usd !== undefined) usage.cost_usd = sniffed.cost_usd;
    }
    this.logStep({ type, name, input, output, latency_ms: latency, ...usage });
    return output;
  }

  /**
   * Wait (at most timeoutMs) for the steps logged so far to be delivered.
   * @returns {Promise<{pending: number, dropped: number}>}
   */
  async flush(timeoutMs = this._cfg.flushTimeoutMs) {
    // the timer is cleared as soon as the steps are through: an agent awaiting complete()
    // is never kept alive by it, nor let go while steps are still being retried
    let timer;
    const expired = new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs); });
    try {
      await Promise.race([this._tail, expired]);
    } finally {
      clearTimeout(timer);
    }
    return { pending: this._pending, dropped: this._dropped };
  }

  /**
   * Finish the run: waits (bounded) for pending steps, then asks the server to grade it.
   * Resolves to { publicUrl }. Rejects with AgentsProofError when the run could not be
   * registered or completed (wrong API key: status 401, code 'unauthorized'; server down:
   * code 'unreachable'). Calling it twice returns the first call's promise.
   */
  complete(output) {
    if (this._completed === null) this._completed = this._complete(output);
    return this._completed;
  }

  async _complete(output) {
    // one deadline for all of it: a server that accepts connections but never answers
    // holds the agent at most completeTimeoutMs, then the run is spooled
    const deadline = Date.now() + this._cfg.completeTimeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    let timer;
    const expired = new Promise((resolve) => { timer = setTimeout(resolve, left()); });
    try {
      return await Promise.race([this._deliver(output, deadline, left), expired.then(() => this._spoolOrFail(output, 'timeout', null))]);
    } finally {
      clearTimeout(timer);
    }
  }

  async _deliver(output, deadline, left) {
    await this._init;
    const transient = (e) => !e.status || e.status === 408 || e.status === 429 || e.status >= 500;
    if (this._initError !== null && transient(this._initError) && this._runBody !== undefined && Date.now() < deadline) {
      await this._register(Math.min(left(), this._cfg.requestTimeoutMs), true); // the server may be back
    }
    if (this._initError !== null) {
      if (retryable(this._initError)) return this._spoolOrFail(output, this._initError.code, this._initError);
      const e = this._initError;
      throw new AgentsProofError(
        e.message.replace('failed to init run', 'failed to complete run (the run was never registered)'),
        { status: e.status, code: e.code, body: e.body, cause: e },
      );
    }
    const { pending } = await this.flush(Math.min(this._cfg.flushTimeoutMs, left()));
    if (pending > 0) {
      report(this._onError, new AgentsProofError(`AgentsProof: completing with ${pending} steps still in flight`, { code: 'timeout' }), { op: 'complete', runId: this.runId });
    }
    // every step the server has not answered for: again, in order, until the deadline
    // a server that refuses connections gets UNREACHABLE_GRACE_MS to come back (a restart)
    let lastErr = null;
    let refusedSince = null;
    for (const [stepIndex, body] of [...this._unacked.entries()].sort((a, b) => a[0] - b[0])) {
      for (;;) {
        if (Date.now() >= deadline) return this._spoolOrFail(output, lastErr ? lastErr.code : 'timeout', lastErr);
        if (refusedSince !== null && Date.now() - refusedSince > UNREACHABLE_GRACE_MS) return this._spoolOrFail(output, 'unreachable', lastErr);
        try {
          await this._post(body, stepIndex, Math.min(left(), this._cfg.requestTimeoutMs));
          refusedSince = null;
          break;
        } catch (err) {
          if (!retryable(err)) break; // refused for good: reported, not retried
          lastErr = err;
          refusedSince = err.code === 'unreachable' ? refusedSince ?? Date.now() : null;
          if (err.status === 401 || err.status === 403) return this._spoolOrFail(output, err.code, err);
          await sleep(Math.min(STEP_RETRY_DELAY_MS, left()));
        }
      }
    }
    let data;
    try {
      data = await request(this._conn, 'complete run', 'POST', `/runs/${encodeURIComponent(this._remoteRunId)}/complete`, { output }, left());
    } catch (err) {
      if (retryable(err)) return this._spoolOrFail(output, err.code, err);
      report(this._onError, err, { op: 'complete', runId: this.runId });
      throw err;
    }
    const publicUrl = data && typeof data === 'object' ? data.publicUrl ?? data.public_url ?? null : null;
    this._publicUrl = publicUrl;
    return { publicUrl };
  }

  /**
   * The server could not take the run now: write it, with every unacknowledged step, to
   * the spool for `agentsproof sync`, then reject with an AgentsProofError that says where.
   */
  async _spoolOrFail(output, code, cause) {
    if (this._settled) throw this._settled;
    const steps = [...this._unacked.entries()].sort((a, b) => a[0] - b[0]).map(([, body]) => JSON.parse(body));
    let run;
    try {
      run = this._runBody === undefined ? { clientRunId: this.runId } : JSON.parse(this._runBody);
    } catch {
      run = { clientRunId: this.runId };
    }
    const reason = cause && cause.message ? cause.message : 'no answer from the server in time';
    const record = {
      baseUrl: safeBaseUrl(this._conn.baseUrl), reason, remoteRunId: this._remoteRunId,
      run, steps, completed: true, output: output === undefined ? null : JSON.parse(safeStringify(output) ?? 'null'),
    };
    const spooled = await writeSpool(record, this._spoolDir);
    const where = spooled ? `; spooled to ${spooled} \u2014 upload it with \`agentsproof sync\`` : '; it could not be spooled';
    const err = new AgentsProofError(`AgentsProof: failed to complete run \u2014 ${reason.replace(/^AgentsProof: failed to [^\u2014]*\u2014 /, '')}${where}`, {
      status: cause ? cause.status ?? null : null, code: code || 'timeout', body: cause ? cause.body : undefined, cause,
    });
    err.spooled = spooled;
    this._settled = err;
    throw err; // the caller gets it: not reported to onError as well
  }
}

function pick(obj, camel, snake) {
  if (!obj || typeof obj !== 'object') return undefined;
  return obj[camel] !== undefined ? obj[camel] : obj[snake];
}

/** A golden as served by the server, with camelCase fields (snake_case ones filled in). */
function normaliseGolden(g) {
  const golden = g && typeof g === 'object' ? { ...g } : { input: g };
  const fields = [
    ['expectedOutput', 'expected_output'],
    ['expectedBehavior', 'expected_behavior'],
    ['successCriteria', 'success_criteria'],
    ['traceAssertions', 'trace_assertions'],
    ['failureModes', 'failure_modes'],
    ['customGraderIds', 'custom_grader_ids'],
  ];
  for (const [camel, snake] of fields) {
    const v = pick(golden, camel, snake);
    if (v !== undefined && golden[camel] === undefined) golden[camel] = v;
  }
  return golden;
}

/** The client: `new AgentsProof({ apiKey, baseUrl?, onError? })`. */
class AgentsProof {
  constructor(options = {}) {
    const o = options ?? {};
    this.apiKey = o.apiKey ?? env('AGENTSPROOF_API_KEY') ?? '';
    this.baseUrl = normaliseBaseUrl(o.baseUrl ?? env('AGENTSPROOF_BASE_URL') ?? DEFAULT_BASE_URL);
    this.onError = o.onError;
    this.prices = o.prices;
    this.spoolDir = o.spoolDir;
    this._cfg = {};
    for (const k of Object.keys(DEFAULTS)) if (o[k] !== undefined) this._cfg[k] = o[k];
  }

  _runOptions(options) {
    return { ...this._cfg, onError: this.onError, prices: this.prices, spoolDir: this.spoolDir, ...options, apiKey: this.apiKey, baseUrl: this.baseUrl };
  }

  /** Start a traced run. Returns at once; never throws because of the server. */
  startRun(options = {}) {
    return new AgentRun(this._runOptions(options ?? {}));
  }

  /**
   * Run the approved goldens of a suite through `handler(input, ctx)` locally, one case at a
   * time, and return the server's aggregate { passedCases, failedCases, overallScore, publicUrl }.
   * A case passes when the handler does not throw. A run started with ctx.startRun() and
   * not completed by the handler is completed with the handler's return value.
   */
  async runProofSuite(options) {
    const { projectSlug, suiteSlug, handler } = options ?? {};
    const conn = { apiKey: this.apiKey, baseUrl: this.baseUrl };
    const timeout = this._cfg.completeTimeoutMs ?? DEFAULTS.completeTimeoutMs;
    if (typeof handler !== 'function') throw new TypeError('runProofSuite: handler must be a function');
    let data;
    try {
      data = await request(conn, 'load proof suite', 'GET',
        `/proof-suites/${encodeURIComponent(suiteSlug)}/cases?projectSlug=${encodeURIComponent(projectSlug ?? '')}`,
        undefined, timeout);
    } catch (err) {
      report(this.onError, err, { op: 'runProofSuite' });
      throw err;
    }
    const proofRunId = data && data.proofRunId !== undefined ? data.proofRunId : data && data.proof_run_id;
    const cases = data && Array.isArray(data.cases) ? data.cases : [];
    if (proofRunId === undefined || proofRunId === null) {
      throw new AgentsProofError('AgentsProof: failed to load proof suite \u2014 no proofRunId in the response', { status: 200, code: 'bad_response', body: data });
    }

    for (const raw of cases) {
      const golden = normaliseGolden(raw);
      const runs = [];
      const ctx = {
        golden,
        proofRunId,
        startRun: (overrides = {}) => {
          const ov = overrides ?? {};
          const run = this.startRun({
            ...ov,
            projectSlug,
            label: ov.label ?? `Proof case: ${golden.name || golden.id}`,
            input: ov.input !== undefined ? ov.input : golden.input,
            goal: ov.goal ?? golden.goal,
            expectedOutput: ov.expectedOutput !== undefined ? ov.expectedOutput : golden.expectedOutput,
            // the server links the run to its golden (and applies the golden's criteria,
            // assertions and failure modes) from metadata.goldenId, as for agentsproof@1.0.6
            metadata: { ...(ov.metadata ?? {}), goldenId: golden.id, proofRunId },
          });
          runs.push(run);
          return run;
        },
      };
      let passed = false;
      let failureSummary = null;
      let result;
      try {
        result = await handler(golden.input, ctx);
        passed = true;
      } catch (err) {
        failureSummary = String(err instanceof Error ? err.message || err : safeStringify(err));
      }
      for (const run of runs) {
        if (run._completed === null) {
          try {
            await run.complete(passed ? (result === undefined ? null : result) : { error: failureSummary });
          } catch {
            // reported through onError by complete()
          }
        } else {
          await run._completed.catch(() => {});
        }
      }
      const last = runs[runs.length - 1];
      const runId = last ? await last.getRemoteId() : null;
      try {
        await request(conn, 'record proof case', 'POST', `/proof-runs/${encodeURIComponent(proofRunId)}/case-results`,
          { goldenId: golden.id, runId, score: null, passed, failureSummary }, timeout);
      } catch (err) {
        report(this.onError, err, { op: 'runProofSuite', goldenId: golden.id });
      }
    }

    try {
      return await request(conn, 'complete proof suite', 'POST', `/proof-runs/${encodeURIComponent(proofRunId)}/complete`, undefined, timeout);
    } catch (err) {
      report(this.onError, err, { op: 'runProofSuite' });
      throw err;
    }
  }
}

/** Convenience wrapper: trace an LLM call. */
function traceLlm(run, name, fn, input, options) {
  return run.trace('llm_call', name, fn, input, options);
}

/** Convenience wrapper: trace a tool call. */
function traceTool(run, name, fn, input, options) {
  return run.trace('tool_call', name, fn, input, options);
}

module.exports = { DEFAULT_BASE_URL, VERSION, AgentsProofError, safeStringify, sniffUsage, AgentRun, AgentsProof, traceLlm, traceTool };
