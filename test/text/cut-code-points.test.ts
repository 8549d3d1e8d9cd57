import { describe, expect, it } from 'vitest';
import { cutToCodePoints } from '../../src/text/cut-code-points.js';

describe('cutToCodePoints', () => {
  it('keeps a text no longer than the limit as it is', () => {
    expect(cutToCodePoints('', 3)).toBe('');
    expect(cutToCodePoints('abc', 3)).toBe('abc');
    expect(cutToCodePoints('😀😀', 2)).toBe('😀😀');
  });

  it('counts a surrogate pair as one and never splits it', () => {
    expect(cutToCodePoints('a😀b', 2)).toBe('a😀');
    expect(cutToCodePoints('a😀b', 1)).toBe('a');
    expect(cutToCodePoints(`a${'😀'.repeat(10)}`, 4)).toBe('a😀😀😀');
  });

  it('keeps a lone surrogate it finds as one code point', () => {
    expect(cutToCodePoints('\ud83dxyz', 2)).toBe('\ud83dx');
  });
});
