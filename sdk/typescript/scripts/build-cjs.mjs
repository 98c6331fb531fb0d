// Generates lib/index.cjs (CommonJS, for `require('agentsproof')`) and lib/index.d.cts from
// the ESM source, so both entry points are the same code. No bundler: the source has no
// imports, so turning `export <declaration>` into a declaration plus module.exports is enough.
// `node scripts/build-cjs.mjs --check` exits 1 when the committed files are stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const lib = (name) => fileURLToPath(new URL(`../lib/${name}`, import.meta.url));

export function buildCjs(source) {
  const names = [];
  const body = source.replace(/^export (const|class|function|async function) ([A-Za-z_$][\w$]*)/gm, (_m, kind, name) => {
    names.push(name);
    return `${kind} ${name}`;
  });
  if (/^export /m.test(body)) throw new Error('build-cjs: an export form this script does not handle');
  return `'use strict';\n// GENERATED from index.js by scripts/build-cjs.mjs \u2014 do not edit.\n${body}\nmodule.exports = { ${names.join(', ')} };\n`;
}

const outputs = {
  'index.cjs': buildCjs(readFileSync(lib('index.js'), 'utf8')),
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
