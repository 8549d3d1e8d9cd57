import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_PREFIX, createHardeningBoard, type HardeningBoard } from '../hardening/support/baud-process.js';
import { describeEachDialect } from '../support/test-board.js';

const DRAIN_SECONDS = 3;

/**
 * A real `baud serve` that gets SIGTERM with `shutdownDrainSeconds` set: its readiness probe
 * turns 503 "draining" at once while it goes on answering requests for the drain period, and
 * only then stops listening and exits 0 — what a load balancer needs to move traffic away.
 */
describeEachDialect('draining a real node on SIGTERM', (dialect) => {
  let board: HardeningBoard;
  beforeAll(() => {
    board = createHardeningBoard(dialect, { contentServers: { web: { shutdownDrainSeconds: DRAIN_SECONDS } } });
  });
  afterAll(async () => {
    await board?.destroy();
  });

  it('answers ready 503 "draining" and keeps serving until the drain is over, then exits 0', async () => {
    const server = await board.start();
    const ready = () => fetch(`${server.origin}/_baud/health/ready`);
    expect((await ready()).status).toBe(200);

    const signalledAt = performance.now();
    server.signal('SIGTERM');
    await server.waitForOutput(/SIGTERM received: not ready; serving 3s more/);
    const draining = await ready();
    expect(draining.status).toBe(503);
    expect(((await draining.json()) as { status: string }).status).toBe('draining');
    expect((await fetch(`${server.origin}${API_PREFIX}/system/info`)).status).toBe(200);
    expect((await fetch(`${server.origin}/_baud/health/live`)).status).toBe(200);
    expect(server.hasExited()).toBe(false);

    const exit = await server.exited;
    const secondsToExit = (performance.now() - signalledAt) / 1000;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(secondsToExit).toBeGreaterThanOrEqual(DRAIN_SECONDS - 0.1);
    await expect(fetch(`${server.origin}/_baud/health/live`)).rejects.toThrow();
  }, 120_000);
});
