import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Vitest global set-up: compiles src/ into dist/ once per run, so the tests that spawn the
 * `baud` command (test/support/baud-command.ts) run the code as it is now, never a stale build.
 */
export default function compileOnce(): void {
  execFileSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}
