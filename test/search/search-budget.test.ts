import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServiceUnavailableError } from '../../src/errors.js';
import { createSearchBudget, SEARCH_BUDGET, searchBudgetLimitsFor } from '../../src/search/search-budget.js';

/** A search the test finishes by hand. */
function heldSearch() {
  let finish: (value: string) => void = () => {};
  const result = new Promise<string>((resolve) => {
    finish = resolve;
  });
  return { run: () => result, finish };
}

describe('search budget', () => {
  it('runs two searches at once on SQLite (they hold the event loop) and on PostgreSQL every pooled connection but two', () => {
    expect(searchBudgetLimitsFor('sqlite', 10)).toEqual(SEARCH_BUDGET);
    expect(searchBudgetLimitsFor('postgres', 10)).toEqual({ ...SEARCH_BUDGET, maxRunning: 8 });
    expect(searchBudgetLimitsFor('postgres', 40)).toEqual({ ...SEARCH_BUDGET, maxRunning: 38 });
    expect(searchBudgetLimitsFor('postgres', 2)).toEqual({ ...SEARCH_BUDGET, maxRunning: 1 });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs maxRunning searches at once; the next waits and starts when one ends, in order', async () => {
    const budget = createSearchBudget({ maxRunning: 2, maxWaiting: 2, maxWaitMs: 60_000 });
    const [first, second, third, fourth] = [heldSearch(), heldSearch(), heldSearch(), heldSearch()];
    const started: string[] = [];
    const track = (name: string, search: ReturnType<typeof heldSearch>) =>
      budget.run(() => {
        started.push(name);
        return search.run();
      });
    const answers = [track('1', first), track('2', second), track('3', third), track('4', fourth)];
    await expect.poll(() => started).toEqual(['1', '2']);
    expect([budget.running, budget.waiting]).toEqual([2, 2]);

    first.finish('one');
    await expect(answers[0]).resolves.toBe('one');
    await expect.poll(() => started).toEqual(['1', '2', '3']);
    expect([budget.running, budget.waiting]).toEqual([2, 1]);

    second.finish('two');
    third.finish('three');
    fourth.finish('four');
    await expect(Promise.all(answers)).resolves.toEqual(['one', 'two', 'three', 'four']);
    expect([budget.running, budget.waiting]).toEqual([0, 0]);
  });

  it('answers 503 with Retry-After at once when the queue is full, and frees the slot of a failed search', async () => {
    const budget = createSearchBudget({ maxRunning: 1, maxWaiting: 1, maxWaitMs: 60_000 });
    const running = heldSearch();
    const waiting = heldSearch();
    const first = budget.run(running.run);
    const second = budget.run(waiting.run);
    const refused = await budget.run(async () => 'never').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).status).toBe(503);
    expect((refused as ServiceUnavailableError).headers).toEqual({ 'retry-after': '1' });

    running.finish('done');
    waiting.finish('done too');
    await expect(Promise.all([first, second])).resolves.toEqual(['done', 'done too']);
    await expect(budget.run(() => Promise.reject(new Error('broken')))).rejects.toThrow('broken');
    expect(budget.running).toBe(0);
  });

  it('answers 503 to a search that waited maxWaitMs, and lets the others through', async () => {
    vi.useFakeTimers();
    const budget = createSearchBudget({ maxRunning: 1, maxWaiting: 4, maxWaitMs: 2000 });
    const running = heldSearch();
    const first = budget.run(running.run);
    const late = budget.run(async () => 'late').catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1999);
    expect(budget.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await late).toBeInstanceOf(ServiceUnavailableError);
    expect([budget.running, budget.waiting]).toEqual([1, 0]);

    running.finish('first');
    await expect(first).resolves.toBe('first');
    expect(budget.running).toBe(0);
  });
});
