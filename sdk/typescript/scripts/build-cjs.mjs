// Generates lib/index.cjs (CommonJS, for `require('agentsproof')`) and lib/index.d.cts from
// the ESM source, so both entry points are the same code. No bundler: the source has no
// imports, so turning `export <declaration>` into a declaration plus module.exports is enough.
// First it embeds the server's table of field limits (agentsproof/data/wire_limits.json, the
// one the server and the Python SDK read) into lib/index.js between its BEGIN/END lines.
// `node scripts/build-cjs.mjs --check` exits 1 when the committed files are stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const lib = (name) => fileURLToPath(new URL(`../lib/${name}`, import.meta.url));
export const LIMITS_FILE = fileURLToPath(new URL('../../../agentsproof/data/wire_limits.json', import.meta.url));
const BEGIN = /^\/\/ BEGIN wire_limits\.json.*\n/m;
const END = /^\/\/ END wire_limits\.json$/m;

/** `source` with the WIRE_LIMITS constant between its BEGIN/END lines made from `limitsText`. */
export function embedLimits(source, limitsText) {
  const begin = BEGIN.exec(source);
  const end = END.exec(source);
  if (!begin || !end || end.index < begin.index) throw new Error('build-cjs: lib/index.js lacks its BEGIN/END wire_limits.json lines');
  const table = JSON.stringify(JSON.parse(limitsText), null, 2);
  const start = begin.index + begin[0].length;
  return `${source.slice(0, start)}const WIRE_LIMITS = ${table};\n${source.slice(end.index)}`;
}

export function buildCjs(source) {
  const names = [];
  const body = source.replace(/^export (const|class|function|async function) ([A-Za-z_$][\w$]*)/gm, (_m, kind, name) => {
    names.push(name);
    return `${kind} ${name}`;
  });
  if (/^export /m.test(body)) throw new Error('build-cjs: an export form this script does not handle');
  return `'use strict';\n// GENERATED from index.js by scripts/build-cjs.mjs \u2014 do not edit.\n${body}\nmodule.exports = { ${names.join(', ')} };\n`;
}

const esm = embedLimits(readFileSync(lib('index.js'), 'utf8'), readFileSync(LIMITS_FILE, 'utf8'));
const outputs = {
  'index.js': esm,
  'index.cjs': buildCjs(esm),
  'index.d.cts': readFileSync(lib('index.d.ts'), 'utf8'),
};
if (process.argv.includes('--check')) {
  let stale = false;
  for (const [name, text] of Object.entries(outputs)) {
    let current = '';
    try { current = readFileSync(lib(name), 'utf8'); } catch { /* missing */ }
    if (current !== text) { console.error(`lib/${name} is stale: run npm run build`); stale = true; }
  }
  process.exit(stale ? 1 : 0);
} else {
  for (const [name, text] of Object.entries(outputs)) writeFileSync(lib(name), text);
}
