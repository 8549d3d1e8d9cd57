/**
 * `npm run bench`: runs every benchmark in this folder, one after another, each in its own
 * process (so one's memory does not colour the next), and fails if any of them fails.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const here = import.meta.dirname;
const tsx = path.resolve(here, '../node_modules/.bin/tsx');
const benches = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .sort();
const failures: string[] = [];
for (const name of benches) {
  console.log(`\n== ${name}`);
  const result = spawnSync(tsx, [path.join(here, name)], { stdio: 'inherit' });
  if (result.status !== 0) failures.push(name);
}
console.log(failures.length === 0 ? '\nall benchmarks passed' : `\nfailed: ${failures.join(', ')}`);
process.exitCode = failures.length === 0 ? 0 : 1;
