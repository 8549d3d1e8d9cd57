import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The long security runs: fuzzing every operation, real server processes killed mid-traffic,
 * crowds of slow clients, searches under load, event streams that fill the kernel's buffers.
 * They cost 2.5 min of CPU, 40% on top of the rest of `npm test` (2-core machine), so `npm test`
 * leaves them out and `npm run test:hardening` (`--mode hardening`) runs only them; CI runs
 * both. The quick regression tests of test/hardening stay in `npm test`.
 */
const LONG_SUITES = [
  'test/hardening/fuzz.test.ts',
  'test/hardening/faults.test.ts',
  'test/hardening/slow-clients.test.ts',
  'test/hardening/search-load.test.ts',
  'test/hardening/stream-budget.test.ts',
];

/** Compiles dist/ for the tests that run the `baud` command; one project's set-up, so it runs once. */
const COMPILE_ONCE = ['test/support/compile-once.ts'];

/**
 * Test files that need a worker of their own: those that replace a module of src (vi.mock), which
 * only a module graph of their own sees, and those that count every pending timer (a shared
 * worker's earlier files leave timers behind: the recent cache's "no sweep left" check saw one).
 */
const OWN_MODULE_GRAPH = [
  'test/files/file-storage-late-open.test.ts',
  'test/http/reader-unavailable.test.ts',
  'test/recent-cache.test.ts',
];

export default defineConfig(({ mode }) => ({
  test: {
    pool: 'forks',
    // Part of the test time is waiting: server processes, timeouts, PostgreSQL. One worker per
    // spare core (1 on a 2-core machine) ran the suite in 6.5 min; 3 take 4 min.
    maxWorkers: 3,
    // End-to-end tests run several real processes in one test; on a loaded 2-core machine each
    // start can take 6 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects:
      mode === 'hardening'
        ? [{ extends: true, test: { name: 'hardening', include: LONG_SUITES, globalSetup: COMPILE_ONCE } }]
        : [
            {
              extends: true,
              test: {
                name: 'shared',
                globalSetup: COMPILE_ONCE,
                include: ['test/**/*.test.ts'],
                exclude: [...configDefaults.exclude, ...LONG_SUITES, ...OWN_MODULE_GRAPH],
                // Files of a worker share one module graph: src, Fastify and the drivers load once per
                // worker instead of once per file, which was a third of the CPU the tests took.
                isolate: false,
              },
            },
            { extends: true, test: { name: 'isolated', include: OWN_MODULE_GRAPH } },
          ],
  },
}));
