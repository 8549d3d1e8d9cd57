import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkAreaGlobs,
  compileAreaGlobs,
  MAX_AREA_GLOB_LENGTH,
  MAX_AREA_GLOBS,
  matchesAreaGlob,
} from '../../src/access/area-glob.js';
import { BadRequestError } from '../../src/errors.js';

describe('matchesAreaGlob', () => {
  it.each([
    ['general', 'general', true],
    ['general', 'generals', false],
    ['gen*', 'general', true],
    ['gen*', 'gen', true],
    ['*al', 'general', true],
    ['*al', 'generals', false],
    ['g?neral', 'general', true],
    ['g?neral', 'gneral', false],
    ['*', '', true],
    ['?', '', false],
    ['a*b*c', 'aXbYbZc', true],
    ['a*b*c', 'aXbYcZ', false],
    ['**a**', 'bab', true],
    ['pub.*', 'pub.x', true],
    ['pub.*', 'pubXx', false],
    ['***a.*', 'aa', false],
  ])('%s against %s is %s', (glob, tag, expected) => {
    expect(matchesAreaGlob(glob, tag)).toBe(expected);
  });

  it('agrees with a regular expression of the glob on every glob of * and ? over tag characters', () => {
    const character = fc.constantFrom('a', 'b', '.', '_', '-', '1');
    // Tags have at least one character.
    const tag = fc.string({ unit: character, minLength: 1, maxLength: 12 });
    const glob = fc.string({ unit: fc.oneof(character, fc.constantFrom('*', '?')), minLength: 1, maxLength: 10 });
    // The reference is the plain translation (`*` any run, `?` one character, the rest escaped),
    // not picomatch: it reads `***a.*` as if `.` were a wildcard, so `aa` matched it.
    const reference = (pattern: string) =>
      new RegExp(
        `^${[...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.-]/, '\\$&'))).join('')}$`,
        's',
      );
    fc.assert(
      fc.property(glob, tag, (pattern, areaTag) => {
        expect(matchesAreaGlob(pattern, areaTag)).toBe(reference(pattern).test(areaTag));
      }),
      { numRuns: 5000 },
    );
  });

  it('takes every other character literally, so a glob stored before the check matches only itself', () => {
    expect(compileAreaGlobs(['{a,b}'])('a')).toBe(false);
    expect(compileAreaGlobs(['{a,b}'])('{a,b}')).toBe(true);
    expect(compileAreaGlobs(['+(@(*|*))+(@(*|*))#'])('general')).toBe(false);
  });
});

describe('checkAreaGlobs', () => {
  const refusal = (globs: readonly string[]) => {
    try {
      checkAreaGlobs(globs, '/query/areas');
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      return (error as BadRequestError).errors;
    }
    throw new Error('accepted');
  };

  it('keeps tag characters, * and ?, without repeats', () => {
    expect(checkAreaGlobs(['pub_*', 'pub_*', 'local-?.x', 'A1'], '/query/areas')).toEqual(['pub_*', 'local-?.x', 'A1']);
  });

  it.each(['{a,b}', '[ab]', '+(a)', '@(a)', '!(a)', 'a|b', 'a\\*', 'a/b', 'a b', 'é', ''])('refuses %j', (glob) => {
    expect(refusal(['ok', glob])).toEqual([
      { pointer: '/query/areas', message: expect.stringContaining(`(not "${glob}")`) },
    ]);
  });

  it(`accepts ${MAX_AREA_GLOBS} globs of ${MAX_AREA_GLOB_LENGTH} characters and refuses one more of either`, () => {
    const longest = '*'.repeat(MAX_AREA_GLOB_LENGTH);
    expect(
      checkAreaGlobs(
        Array.from({ length: MAX_AREA_GLOBS }, (_, index) => `${index}${longest.slice(String(index).length)}`),
        '/q',
      ),
    ).toHaveLength(MAX_AREA_GLOBS);
    expect(refusal([`${longest}*`])).toHaveLength(1);
    expect(refusal(Array.from({ length: MAX_AREA_GLOBS + 1 }, (_, index) => `a${index}`))).toEqual([
      { pointer: '/query/areas', message: `has ${MAX_AREA_GLOBS + 1} globs; at most ${MAX_AREA_GLOBS} are allowed` },
    ]);
  });
});
