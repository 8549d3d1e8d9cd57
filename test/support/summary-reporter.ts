import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, `Summary: N passed, N failed, N skipped`, after vitest's own
 * summary so that CI tooling that only understands that form can read the result.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file whose setup failed has its tests skipped, not failed: count the file once, so the
      // summary never reads "0 failed" for a run vitest itself failed.
      const hasFailedTest = [...module.children.allTests()].some((test) => test.result().state === 'failed');
      if (module.state() === 'failed' && !hasFailedTest) failed++;
    }
    process.stdout.write(`\nSummary: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
