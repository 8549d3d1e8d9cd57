import { describe, expect, it } from 'vitest';
import { configFromObject } from '../../src/config/load-config.js';
import { retryDelayMs } from '../../src/webhooks/webhook-sender.js';

describe('retryDelayMs', () => {
  const settings = configFromObject({}).webhooks;

  it('starts at 10 s, doubles, stops at an hour, and spreads each delay by ±20%', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 9, 10, 50, 5000].map((attempt) => retryDelayMs(attempt, settings, middle))).toEqual([
      10_000, 20_000, 40_000, 80_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
    expect(retryDelayMs(1, settings, () => 0)).toBe(8000);
    expect(retryDelayMs(1, settings, () => 0.999_999)).toBeCloseTo(12_000, -1);
  });

  it('reaches the 24-hour limit after about 30 attempts, so a dead receiver is given up on the first day', () => {
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < settings.giveUpAfterHours * 3_600_000) {
      attempts += 1;
      elapsed += retryDelayMs(attempts, settings, () => 0.5);
    }
    expect(attempts).toBeGreaterThan(25);
    expect(attempts).toBeLessThan(settings.maxConsecutiveFailures);
  });
});
