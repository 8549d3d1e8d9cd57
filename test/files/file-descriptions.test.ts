import { describe, expect, it } from 'vitest';
import {
  describeUpload,
  MAX_HASH_TAG_LENGTH,
  MAX_HASH_TAGS,
  type UploadDescriptionInput,
} from '../../src/files/file-descriptions.js';

const NOW = new Date('2025-06-15T12:00:00Z');

function describeWith(overrides: Partial<UploadDescriptionInput>) {
  return describeUpload({ fileName: 'upload.zip', diz: null, longText: null, now: NOW, ...overrides });
}

describe('describeUpload: desc and descLong', () => {
  it('takes the form desc, trimmed, over the DIZ', () => {
    const result = describeWith({ formDesc: '  My upload  ', diz: 'From the DIZ' });
    expect(result.desc).toBe('My upload');
    expect(result.descLong).toBe('From the DIZ');
  });

  it('falls back to the DIZ when the form desc is blank or missing', () => {
    expect(describeWith({ formDesc: '   ', diz: 'From the DIZ' }).desc).toBe('From the DIZ');
    expect(describeWith({ formDesc: null, diz: 'From the DIZ' }).desc).toBe('From the DIZ');
    expect(describeWith({ diz: 'From the DIZ' }).desc).toBe('From the DIZ');
  });

  it('falls back to the file name without its extension', () => {
    expect(describeWith({ fileName: 'cool-demo.zip' }).desc).toBe('cool-demo');
    expect(describeWith({ fileName: 'demo.tar.gz' }).desc).toBe('demo.tar');
    expect(describeWith({ fileName: 'README' }).desc).toBe('README');
    expect(describeWith({ fileName: 'archive.zip', diz: ' \n ' }).desc).toBe('archive');
  });

  it('takes descLong from the long text, else the DIZ, else ""', () => {
    expect(describeWith({ diz: 'short', longText: 'long' }).descLong).toBe('long');
    expect(describeWith({ diz: 'short', longText: '\n\n' }).descLong).toBe('short');
    expect(describeWith({ diz: 'short' }).descLong).toBe('short');
    expect(describeWith({ formDesc: 'form' }).descLong).toBe('');
  });

  it('keeps DIZ text as given, line breaks included', () => {
    const diz = '  ╔══╗\n  ║AB║\n  ╚══╝';
    expect(describeWith({ diz })).toMatchObject({ desc: diz, descLong: diz });
  });
});

describe('describeUpload: estReleaseYear', () => {
  it.each([
    ['1969', null],
    ['1970', 1970],
    ['2025', 2025],
    ['2026', null],
    ['released in 1995 by us', 1995],
    ['(c)1995', 1995],
    ['1995-1996', 1995],
    ['v19950', null],
    ['x1995', null],
    ['1995x', null],
    ['no year here', null],
    ['first 1969 then 1999', 1999],
  ])('finds %j → %s', (desc, year) => {
    expect(describeWith({ formDesc: desc }).estReleaseYear).toBe(year);
  });

  it('looks in desc before descLong', () => {
    expect(describeWith({ formDesc: 'demo 1996', longText: 'greets 1994' }).estReleaseYear).toBe(1996);
    expect(describeWith({ formDesc: 'demo', longText: 'greets 1994' }).estReleaseYear).toBe(1994);
  });

  it('finds a year in the file-name fallback', () => {
    expect(describeWith({ fileName: 'party-1997.zip' }).estReleaseYear).toBe(1997);
  });

  it('uses the UTC year of now', () => {
    const now = new Date('2025-01-01T00:30:00+01:00'); // still 2024 in UTC
    expect(describeWith({ formDesc: '2025', now }).estReleaseYear).toBeNull();
    expect(describeWith({ formDesc: '2024', now }).estReleaseYear).toBe(2024);
  });
});

describe('describeUpload: hashTags', () => {
  it('collects #tags from the description, lowercased and without #', () => {
    const result = describeWith({ formDesc: 'Great #Demo by #group_x for #amiga-500, ranked #1' });
    expect(result.hashTags).toEqual(['demo', 'group_x', 'amiga-500']);
  });

  it('collects tags from desc, then descLong, then the form field, deduplicated in order', () => {
    const result = describeWith({
      formDesc: '#Demo #music',
      longText: 'more #music and #ANSI',
      formHashTags: ' Chiptune, #ansi , demo,, #Scene ',
    });
    expect(result.hashTags).toEqual(['demo', 'music', 'ansi', 'chiptune', 'scene']);
  });

  it('ignores # glued to a word, HTML entities and URL fragments', () => {
    expect(describeWith({ formDesc: 'C# foo#bar &#39; http://x.org/#top ##double' }).hashTags).toEqual([]);
  });

  it('keeps letters beyond ASCII and trims dangling hyphens', () => {
    expect(describeWith({ formDesc: '#Ääkkönen #demo- #-x-' }).hashTags).toEqual(['ääkkönen', 'demo', 'x']);
  });

  it('returns no tags when there are none', () => {
    expect(describeWith({}).hashTags).toEqual([]);
    expect(describeWith({ formHashTags: ' , ,, ' }).hashTags).toEqual([]);
  });

  it('drops control characters from form tags', () => {
    expect(describeWith({ formHashTags: 'a\u0000b, c\u001b[0m' }).hashTags).toEqual(['ab', 'c[0m']);
  });

  it(`cuts each tag to ${MAX_HASH_TAG_LENGTH} characters`, () => {
    const result = describeWith({ formDesc: `#${'a'.repeat(100)}`, formHashTags: 'b'.repeat(100) });
    expect(result.hashTags).toEqual(['a'.repeat(MAX_HASH_TAG_LENGTH), 'b'.repeat(MAX_HASH_TAG_LENGTH)]);
  });

  it(`keeps at most ${MAX_HASH_TAGS} tags`, () => {
    const text = Array.from({ length: 40 }, (_, i) => `#tag${i}`).join(' ');
    const result = describeWith({ formDesc: text, formHashTags: 'late' });
    expect(result.hashTags).toHaveLength(MAX_HASH_TAGS);
    expect(result.hashTags[0]).toBe('tag0');
    expect(result.hashTags.at(-1)).toBe('tag31');
  });
});
