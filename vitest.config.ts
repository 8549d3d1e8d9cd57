import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/compile-once.ts'],
    pool: 'forks',
    // Most test time is waiting: spawned CLI and server processes, timeouts, PostgreSQL. One
    // worker per spare core (1 on a 2-core machine) ran the suite in 6.5 min; 3 take 4 min.
    maxWorkers: 3,
    // End-to-end CLI tests run several real processes in one test; on a loaded 2-core machine
    // each start can take 6 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
