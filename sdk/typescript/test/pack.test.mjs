// `npm pack` output installs and imports in a clean folder: ESM import, CommonJS require, and
// the type declarations compile for a strict TypeScript consumer (with `typescript`, the one
// devDependency; run `npm ci` first).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SDK_DIR, unavailable } from './helpers.mjs';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let work;
let tarball;
let packFiles;
let app;

before(() => {
  work = mkdtempSync(join(tmpdir(), 'ap-ts-pack-'));
  const pack = spawnSync(npm, ['pack', '--json', '--pack-destination', work], { cwd: SDK_DIR, encoding: 'utf8', timeout: 120_000 });
  assert.equal(pack.status, 0, pack.stderr);
  const info = JSON.parse(pack.stdout)[0];
  tarball = join(work, info.filename);
  packFiles = info.files.map((f) => f.path).sort();
  app = join(work, 'clean-app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'clean-app', version: '0.0.0', private: true, type: 'module' }));
  const inst = spawnSync(npm, ['install', tarball, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, encoding: 'utf8', timeout: 120_000 });
  assert.equal(inst.status, 0, `npm install of the tarball (offline: it has no dependencies) failed:\n${inst.stderr}`);
});
after(() => { if (work) rmSync(work, { recursive: true, force: true }); });

test('the tarball holds the library, its types and the README only', () => {
  assert.deepEqual(packFiles, ['README.md', 'lib/index.cjs', 'lib/index.d.cts', 'lib/index.d.ts', 'lib/index.js', 'package.json']);
  const pkg = JSON.parse(readFileSync(join(app, 'node_modules/agentsproof/package.json'), 'utf8'));
  assert.equal(pkg.name, 'agentsproof');
  assert.equal(pkg.type, 'module');
  assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependencies');
  assert.deepEqual(Object.keys(JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')).packages).sort(), ['', 'node_modules/agentsproof']);
});

test('installed package: import (ESM) and require (CommonJS) both work', () => {
  writeFileSync(join(app, 'esm.mjs'), `import { AgentsProof, AgentRun, AgentsProofError, traceLlm, traceTool } from 'agentsproof';
    const ap = new AgentsProof({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9/api' });
    console.log([typeof AgentsProof, typeof AgentRun, typeof AgentsProofError, typeof traceLlm, typeof traceTool, ap.baseUrl].join(' '));`);
  writeFileSync(join(app, 'cjs.cjs'), `const { AgentsProof } = require('agentsproof');
    console.log(typeof AgentsProof, new AgentsProof({ apiKey: 'k' }).baseUrl);`);
  const esm = spawnSync(process.execPath, ['esm.mjs'], { cwd: app, encoding: 'utf8', env: { ...process.env, AGENTSPROOF_BASE_URL: '' } });
  assert.equal(esm.status, 0, esm.stderr);
  assert.equal(esm.stdout.trim(), 'function function function function function http://127.0.0.1:9/api');
  const cjs = spawnSync(process.execPath, ['cjs.cjs'], { cwd: app, encoding: 'utf8', env: { ...process.env, AGENTSPROOF_BASE_URL: '' } });
  assert.equal(cjs.status, 0, cjs.stderr);
  assert.equal(cjs.stdout.trim(), 'function http://127.0.0.1:8787/api');
});

test('installed package: the type declarations compile for a strict TypeScript consumer (ESM and CJS)', (t) => {
  const tsc = join(SDK_DIR, 'node_modules/typescript/bin/tsc');
  if (unavailable(t, existsSync(tsc) ? null : 'typescript is not installed (run npm ci in sdk/typescript)')) return;
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: false, types: [] },
    files: ['agent.mts', 'legacy.cts'],
  }));
  writeFileSync(join(app, 'agent.mts'), `import { AgentsProof, AgentsProofError, type AgentRun, type ProofSuiteResult, type StepPayload } from 'agentsproof';
declare const process: { env: Record<string, string | undefined> };
const ap = new AgentsProof({ apiKey: process.env.AGENTSPROOF_API_KEY!, onError: (err, ctx) => void [err, ctx.op] });
const run: AgentRun = ap.startRun({
  projectSlug: 'p', label: 'l', input: { q: 1 }, clientRunId: 'c', goldenId: 'g', goal: 'goal', expectedOutput: 'x',
  expectedBehavior: 'b', successCriteria: ['a'], traceAssertions: ['max_steps:3'], failureModes: ['f'], metadata: { k: 1 },
});
const n: number = await run.trace('tool_call', 'sync', () => 1);
const s: string = await run.trace('llm_call', 'async', async () => 'text', { prompt: 'p' }, {
  extract: (out) => ({ token_count: out.length, cost_usd: 0.1 }),
});
const step: StepPayload = { type: 'memory_read', name: 'm', latency_ms: 1 };
await run.logStep(step);
try {
  const { publicUrl }: { publicUrl: string } = await run.complete({ n, s });
  void publicUrl;
} catch (err) {
  if (err instanceof AgentsProofError) { const st: number | null = err.status; void st; }
}
const result: ProofSuiteResult = await ap.runProofSuite({
  projectSlug: 'p', suiteSlug: 's',
  handler: async (input, ctx) => { const r = ctx.startRun({ label: ctx.golden.name }); await r.complete(input); },
});
const passed: number = result.passedCases;
void passed;
// @ts-expect-error projectSlug is required
ap.startRun({ input: 1 });
// @ts-expect-error unknown step type
run.logStep({ type: 'thinking' });
// @ts-expect-error trace returns the function's type
const wrong: string = await run.trace('tool_call', 'n', () => 1);
void wrong;
`);
  writeFileSync(join(app, 'legacy.cts'), `import ap = require('agentsproof');
const client = new ap.AgentsProof({ apiKey: 'k' });
const run: ap.AgentRun = client.startRun({ projectSlug: 'p', input: 1 });
export const p: Promise<number> = run.trace('tool_call', 't', () => 2);
`);
  const out = spawnSync(process.execPath, [tsc, '-p', app], { cwd: app, encoding: 'utf8', timeout: 120_000 });
  assert.equal(out.status, 0, `tsc:\n${out.stdout}${out.stderr}`);
});
