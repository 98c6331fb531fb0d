// extensions: file://../scripts/workspace-setup.mjs:beforeAll
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function beforeAll(context) {
  writeFileSync(join(context.workspace_path, 'ext.txt'), `EXT ${context.hook_name}\n`);
  return { output: `extension saw ${context.eval_dir.endsWith('evals') ? 'the evals folder' : context.eval_dir}` };
}

export function afterEach(context) {
  return { output: `after ${context.test_id}` };
}
