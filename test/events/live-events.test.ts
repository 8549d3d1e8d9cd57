import { setImmediate as nextTurn } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { startLiveEvents } from '../../src/events/live-events.js';
import { createTestBoard, describeEachDialect } from '../support/test-board.js';

describeEachDialect('live events', (dialect) => {
  // CI once failed on a prune that reached the database after the board had closed it: the
  // first prune starts with the live events, and stopping did not wait for it.
  it('waits for the prune under way before it stops, so the database may close after it', async () => {
    const board = await createTestBoard(dialect);
    try {
      const { events, database, clock, mayCallerSee, config } = board.board;
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let prunes = 0;
      const log = {
        ...events,
        async prune() {
          prunes += 1;
          await held;
          return events.prune();
        },
      };
      const errors: unknown[] = [];
      const live = startLiveEvents({
        log,
        database,
        clock,
        mayCallerSee,
        settings: config.events,
        onError: (error) => errors.push(error),
      });
      let isStopped = false;
      const stopping = live.stop().then(() => {
        isStopped = true;
      });
      await nextTurn();
      expect(isStopped).toBe(false);
      release();
      await stopping;
      expect(prunes).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await board.close();
    }
  });
});
