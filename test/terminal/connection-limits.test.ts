import { describe, expect, it } from 'vitest';
import { type ConnectionPlace, createConnectionLimits } from '../../src/terminal/connection-limits.js';

const settings = { maxConnectionsPerNode: 5, maxConnectionsPerAddress: 3, maxUnauthenticatedPerAddress: 2 };

function admitted(limits: ReturnType<typeof createConnectionLimits>, address: string): ConnectionPlace {
  const admission = limits.admit(address);
  if (!admission.isAdmitted) throw new Error(`refused: ${admission.reason}`);
  return admission.place;
}

describe('terminal connection limits', () => {
  it('refuses a third connection still logging in from one address, with a line saying why', () => {
    const limits = createConnectionLimits(settings);
    admitted(limits, '10.0.0.1');
    admitted(limits, '10.0.0.1');
    expect(limits.admit('10.0.0.1')).toEqual({
      isAdmitted: false,
      reason: 'Too many connections from your address are still logging in; finish one and call again.',
    });
    // Another address is not held back by this one.
    expect(limits.admit('10.0.0.2').isAdmitted).toBe(true);
  });

  it('lets a logged-in connection stop counting as unauthenticated, up to the per-address cap', () => {
    const limits = createConnectionLimits(settings);
    admitted(limits, '10.0.0.1').loggedIn();
    admitted(limits, '10.0.0.1').loggedIn();
    admitted(limits, '10.0.0.1');
    expect(limits.countsOf('10.0.0.1')).toEqual({ open: 3, unauthenticated: 1 });
    expect(limits.admit('10.0.0.1')).toEqual({
      isAdmitted: false,
      reason: 'Too many connections from your address; hang up one of them and call again.',
    });
  });

  it('refuses past the per-node cap whatever the address', () => {
    const limits = createConnectionLimits(settings);
    for (const address of ['a', 'b', 'c', 'd', 'e']) admitted(limits, address);
    expect(limits.openCount).toBe(5);
    expect(limits.admit('f')).toEqual({
      isAdmitted: false,
      reason: 'The board is full right now; please call again later.',
    });
  });

  it('frees a place exactly once, however often it is released or logged in', () => {
    const limits = createConnectionLimits(settings);
    const first = admitted(limits, '10.0.0.1');
    const second = admitted(limits, '10.0.0.1');
    first.loggedIn();
    first.loggedIn();
    expect(limits.countsOf('10.0.0.1')).toEqual({ open: 2, unauthenticated: 1 });
    first.release();
    first.release();
    first.loggedIn();
    expect(limits.countsOf('10.0.0.1')).toEqual({ open: 1, unauthenticated: 1 });
    second.release();
    second.release();
    expect(limits.countsOf('10.0.0.1')).toEqual({ open: 0, unauthenticated: 0 });
    expect(limits.openCount).toBe(0);
    // All places are back: the caps hold anew.
    admitted(limits, '10.0.0.1');
    admitted(limits, '10.0.0.1');
    expect(limits.admit('10.0.0.1').isAdmitted).toBe(false);
  });
});
