import { readdirSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCE = path.join(ROOT, 'src');

/**
 * Vitest global set-up: compiles src/ into dist/ once per run, so the tests that spawn the
 * `baud` command (test/support/baud-command.ts) run the code as it is now, never a stale build.
 *
 * Each file is transpiled on its own, as `tsc -p tsconfig.build.json` emits it (isolatedModules
 * and verbatimModuleSyntax make that the same code), but without checking types again: the type
 * check runs before the tests in `npm test`, and here it cost 20 s of CPU before any test could
 * start; esbuild takes well under a second.
 */
export default async function compileOnce(): Promise<void> {
  const sources = readdirSync(SOURCE, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(SOURCE, file));
  await build({
    entryPoints: sources,
    outdir: path.join(ROOT, 'dist'),
    outbase: SOURCE,
    tsconfig: path.join(ROOT, 'tsconfig.build.json'),
    platform: 'node',
    format: 'esm',
    target: 'es2022',
    sourcemap: true,
    logLevel: 'warning',
  });
}
