// agentsproof's own implementation of agentv's documented grader SDK (the `agentv` module a
// TypeScript grader, custom assertion or prompt template imports), written from agentv's
// docs: agentsproof puts this folder on NODE_PATH when it runs such a file with bun.
//
// The contract: the payload arrives as JSON on stdin with snake_case keys (output, input,
// expected_output, criteria, input_files, trace, token_usage, duration_ms, config, ...); the
// handler gets it with camelCase keys; its result is printed as one JSON object
// {pass, score, reason, checks, details} on stdout. A handler that throws prints a failing
// result with the error as the reason and exits 1, as agentv's runtime does.
// createProviderClient() reaches the run's judge model through agentsproof's provider proxy
// (a unix socket in the grader's own folder, AGENTSPROOF_PROVIDER_PROXY_SOCKET, with
// agentv's AGENTV_PROVIDER_PROXY_URL and token), counted against the script's max_calls.

import { readFileSync } from 'node:fs';
import { z, ZodError } from './zod.js';

export { z, ZodError };

function camel(key) {
  return /^[A-Z]/.test(key) ? key : key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

export function toCamelCaseDeep(value) {
  if (Array.isArray(value)) return value.map(toCamelCaseDeep);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), toCamelCaseDeep(v)]));
  }
  return value;
}

function clamp(score) {
  return typeof score === 'number' && Number.isFinite(score) ? Math.max(0, Math.min(1, score)) : 0;
}

function message(error) {
  return error instanceof Error ? error.message : String(error);
}

/** The payload on stdin, camelCase, with agentv's defaults for what it leaves out. */
export function readInput() {
  const raw = JSON.parse(readFileSync(0, 'utf8'));
  const input = toCamelCaseDeep(raw);
  input.criteria ??= '';
  input.expectedOutput ??= [];
  input.input ??= [];
  input.inputFiles ??= [];
  input.messages ??= [];
  if (input.outputPath && (input.output === null || input.output === undefined)) {
    const path = input.outputPath;
    let cached;
    Object.defineProperty(input, 'output', {
      get() {
        if (cached === undefined) cached = JSON.parse(readFileSync(path, 'utf8'));
        return cached;
      },
      configurable: true,
      enumerable: true,
    });
  }
  return input;
}

function checks(list) {
  if (!Array.isArray(list)) return [];
  return list.map((c) => ({
    ...c,
    text: String(c?.text ?? c?.name ?? ''),
    pass: Boolean(c?.pass ?? c?.passed),
    reason: String(c?.reason ?? c?.evidence ?? ''),
    ...(typeof c?.score === 'number' ? { score: clamp(c.score) } : {}),
  }));
}

function print(result) {
  console.log(JSON.stringify(result, null, 2));
}

function failed(prefix, error, what) {
  const text = message(error);
  print({ pass: false, score: 0, reason: `${prefix}: ${text}`, checks: [{ text: what, pass: false, reason: text }] });
  process.exit(1);
}

export async function runScriptGrader(handler) {
  try {
    const raw = await handler(readInput());
    if (raw === null || typeof raw !== 'object') throw new Error('the grader returned no {score, pass, reason} object');
    const score = clamp(raw.score);
    const result = {
      pass: typeof raw.pass === 'boolean' ? raw.pass : score >= 0.5,
      score,
      reason: String(raw.reason ?? ''),
      checks: checks(raw.checks ?? raw.assertions),
    };
    if (raw.details !== undefined) result.details = raw.details;
    print(result);
  } catch (error) {
    failed('Evaluation failed', error, 'Script grader execution');
  }
}
export const runCodeGrader = runScriptGrader;

export async function runAssertion(handler) {
  try {
    const raw = (await handler(readInput())) ?? {};
    const score = raw.score !== undefined ? clamp(raw.score) : raw.pass !== undefined ? (raw.pass ? 1 : 0) : 0;
    const pass = raw.pass ?? score >= 0.5;
    const result = { pass, score, reason: raw.reason ?? (pass ? 'Assertion passed' : 'Assertion failed'), checks: checks(raw.checks) };
    if (raw.details !== undefined) result.details = raw.details;
    print(result);
  } catch (error) {
    failed('Assertion failed', error, 'Assertion execution');
  }
}

export async function runPromptTemplate(handler) {
  try {
    const prompt = await handler(readInput());
    process.stdout.write(typeof prompt === 'string' ? prompt : String(prompt ?? ''));
  } catch (error) {
    console.error(`Prompt template failed: ${message(error)}`);
    process.exit(1);
  }
}

export function defineScriptGrader(handler) {
  runScriptGrader(handler);
}
export function defineCodeGrader(handler) {
  runScriptGrader(handler);
}
export const defineCodeJudge = defineCodeGrader;
export function defineAssertion(handler) {
  runAssertion(handler);
}
export function definePromptTemplate(handler) {
  runPromptTemplate(handler);
}

// ---------------------------------------------------------------- the provider proxy

export class ProviderNotAvailableError extends Error {
  constructor(text) {
    super(text);
    this.name = 'ProviderNotAvailableError';
  }
}

export class ProviderInvocationError extends Error {
  constructor(text, statusCode) {
    super(text);
    this.name = 'ProviderInvocationError';
    this.statusCode = statusCode;
  }
}

function request(body) {
  return {
    question: body.question,
    systemPrompt: body.systemPrompt,
    evalCaseId: body.evalCaseId,
    attempt: body.attempt,
    provider: body.provider,
  };
}

export function createProviderClientInternal(url, token, socket) {
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` };
  async function call(method, path, body) {
    const init = { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
    if (socket) init.unix = socket; // bun's fetch over a unix socket: the grader's sandbox has no network
    const response = await fetch(`${url}${path}`, init);
    const text = await response.text();
    if (!response.ok) {
      let why = text || `HTTP ${response.status}`;
      try {
        why = JSON.parse(text).error ?? why;
      } catch {
        // not JSON: the text as it is
      }
      throw new ProviderInvocationError(why, response.status);
    }
    return JSON.parse(text);
  }
  return {
    invoke: (req) => call('POST', '/invoke', request(req)),
    invokeBatch: async (reqs) => (await call('POST', '/invokeBatch', { requests: reqs.map(request) })).responses,
    getInfo: () => call('GET', '/info'),
  };
}

export function createProviderClient() {
  const url = process.env.AGENTV_PROVIDER_PROXY_URL;
  const token = process.env.AGENTV_PROVIDER_PROXY_TOKEN;
  if (!url) return undefined;
  if (!token) throw new ProviderNotAvailableError('AGENTV_PROVIDER_PROXY_URL is set but AGENTV_PROVIDER_PROXY_TOKEN is missing');
  return createProviderClientInternal(url, token, process.env.AGENTSPROOF_PROVIDER_PROXY_SOCKET);
}
/** @deprecated agentv's older name. */
export const createTargetClient = createProviderClient;
