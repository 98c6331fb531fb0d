// workspace.hooks.before_all: agentv's JSON context on stdin, the workspace as {{workspace_path}}
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const context = JSON.parse(readFileSync(0, 'utf8'));
const workspace = process.argv[2];
if (workspace !== context.workspace_path) throw new Error('workspace_path differs');
writeFileSync(join(workspace, 'hook.txt'), `HOOK ${context.test_id}\n`);
console.log(`before_all ran for ${context.test_id}`);
