import { describe, expect, it } from 'vitest';
import type { AcsSubject } from '../../src/acs/acs.js';
import { compileAcs } from '../../src/acs/acs.js';
import { evaluateAcs } from '../../src/acs/acs-evaluator.js';
import { parseAcs } from '../../src/acs/acs-parser.js';

// Wednesday 2024-05-15, 10:30 UTC = 630 minutes past midnight.
const NOW = new Date('2024-05-15T10:30:00.000Z');
const DAY_MS = 86_400_000;

const base: AcsSubject = {
  userId: 7,
  groups: ['users'],
  accountStatus: 2,
  ageYears: 30,
  loginCount: 10,
  postCount: 5,
  accountCreatedAt: new Date(NOW.getTime() - 30 * DAY_MS),
  uploadCount: 4,
  downloadCount: 8,
  uploadBytes: 1000,
  downloadBytes: 4000,
  achievementCount: 3,
  achievementPoints: 50,
  properties: { theme: 'dark' },
  isSecure: true,
};

function subject(overrides: Partial<AcsSubject> = {}): AcsSubject {
  return { ...base, ...overrides };
}

function allows(source: string, who: AcsSubject = base, now: Date = NOW): boolean {
  return evaluateAcs(parseAcs(source), who, now);
}

describe('evaluateAcs', () => {
  it('allows every subject for an empty ACS', () => {
    expect(allows('')).toBe(true);
    expect(allows('  ', subject({ groups: [], accountStatus: 0 }))).toBe(true);
  });

  describe('GM', () => {
    it('holds when the subject is in any listed group', () => {
      expect(allows('GM[users]')).toBe(true);
      expect(allows('GM[sysops,users]')).toBe(true);
      expect(allows('GM[sysops]', subject({ groups: ['users', 'sysops'] }))).toBe(true);
    });

    it('fails when the subject is in none of the groups', () => {
      expect(allows('GM[sysops]')).toBe(false);
      expect(allows('GM[sysops,banned]')).toBe(false);
      expect(allows('GM[users]', subject({ groups: [] }))).toBe(false);
    });

    it('compares group names case-sensitively', () => {
      expect(allows('GM[Users]')).toBe(false);
    });
  });

  describe('ID', () => {
    it('holds when the user id is listed', () => {
      expect(allows('ID7')).toBe(true);
      expect(allows('ID 7')).toBe(true);
      expect(allows('ID[1,7]')).toBe(true);
    });

    it('fails for any other user id', () => {
      expect(allows('ID6')).toBe(false);
      expect(allows('ID8')).toBe(false);
      expect(allows('ID[1,2,3]')).toBe(false);
    });
  });

  describe('AS', () => {
    it('holds only for exactly the given account status', () => {
      expect(allows('AS1')).toBe(false);
      expect(allows('AS2')).toBe(true);
      expect(allows('AS3')).toBe(false);
      expect(allows('AS1', subject({ accountStatus: 1 }))).toBe(true);
    });
  });

  describe('AG', () => {
    it('holds when the age is at least n', () => {
      expect(allows('AG29')).toBe(true);
      expect(allows('AG30')).toBe(true);
      expect(allows('AG31')).toBe(false);
    });

    it('fails when the age is unknown, even for AG 0', () => {
      expect(allows('AG0', subject({ ageYears: null }))).toBe(false);
      expect(allows('AG18', subject({ ageYears: null }))).toBe(false);
    });
  });

  describe.each<[string, keyof AcsSubject, number]>([
    ['NC', 'loginCount', 10],
    ['NP', 'postCount', 5],
    ['UP', 'uploadCount', 4],
    ['DL', 'downloadCount', 8],
    ['BU', 'uploadBytes', 1000],
    ['BD', 'downloadBytes', 4000],
    ['AC', 'achievementCount', 3],
    ['AP', 'achievementPoints', 50],
  ])('%s (%s ≥ n)', (code, field, value) => {
    it(`holds for n = ${value - 1} and n = ${value}, fails for n = ${value + 1}`, () => {
      expect(base[field]).toBe(value);
      expect(allows(`${code}${value - 1}`)).toBe(true);
      expect(allows(`${code} ${value}`)).toBe(true);
      expect(allows(`${code}${value + 1}`)).toBe(false);
    });

    it('holds for n = 0 even when the figure is 0', () => {
      expect(allows(`${code}0`, subject({ [field]: 0 }))).toBe(true);
      expect(allows(`${code}1`, subject({ [field]: 0 }))).toBe(false);
    });
  });

  describe('AA', () => {
    it('counts whole days since the account was created', () => {
      expect(allows('AA29')).toBe(true);
      expect(allows('AA30')).toBe(true);
      expect(allows('AA31')).toBe(false);
    });

    it('does not round up a partial day', () => {
      const created = new Date(NOW.getTime() - 30 * DAY_MS + 1);
      expect(allows('AA29', subject({ accountCreatedAt: created }))).toBe(true);
      expect(allows('AA30', subject({ accountCreatedAt: created }))).toBe(false);
    });

    it('treats an account created now, or in the future, as 0 days old', () => {
      expect(allows('AA0', subject({ accountCreatedAt: NOW }))).toBe(true);
      expect(allows('AA1', subject({ accountCreatedAt: NOW }))).toBe(false);
      expect(allows('AA0', subject({ accountCreatedAt: new Date(NOW.getTime() + DAY_MS) }))).toBe(true);
    });
  });

  describe('NR (upload/download count ratio %)', () => {
    it('compares uploadCount / downloadCount × 100 with n', () => {
      // 4 uploads / 8 downloads = 50 %
      expect(allows('NR49')).toBe(true);
      expect(allows('NR50')).toBe(true);
      expect(allows('NR51')).toBe(false);
    });

    it('is exact where floating-point division is not (29 / 100)', () => {
      const who = subject({ uploadCount: 29, downloadCount: 100 });
      expect(allows('NR29', who)).toBe(true);
      expect(allows('NR30', who)).toBe(false);
    });

    it('counts uploads without downloads as 100 %', () => {
      const who = subject({ uploadCount: 3, downloadCount: 0 });
      expect(allows('NR99', who)).toBe(true);
      expect(allows('NR100', who)).toBe(true);
      expect(allows('NR101', who)).toBe(false);
    });

    it('counts no uploads and no downloads as 0 %', () => {
      const who = subject({ uploadCount: 0, downloadCount: 0 });
      expect(allows('NR0', who)).toBe(true);
      expect(allows('NR1', who)).toBe(false);
    });
  });

  describe('KR (upload/download byte ratio %)', () => {
    it('compares uploadBytes / downloadBytes × 100 with n', () => {
      // 1000 / 4000 = 25 %
      expect(allows('KR24')).toBe(true);
      expect(allows('KR25')).toBe(true);
      expect(allows('KR26')).toBe(false);
    });

    it('counts uploaded bytes without downloads as 100 % and nothing at all as 0 %', () => {
      expect(allows('KR100', subject({ uploadBytes: 1, downloadBytes: 0 }))).toBe(true);
      expect(allows('KR101', subject({ uploadBytes: 1, downloadBytes: 0 }))).toBe(false);
      expect(allows('KR0', subject({ uploadBytes: 0, downloadBytes: 0 }))).toBe(true);
      expect(allows('KR1', subject({ uploadBytes: 0, downloadBytes: 0 }))).toBe(false);
    });
  });

  describe('PC (post/call ratio %)', () => {
    it('compares postCount / loginCount × 100 with n', () => {
      // 5 posts / 10 logins = 50 %
      expect(allows('PC49')).toBe(true);
      expect(allows('PC50')).toBe(true);
      expect(allows('PC51')).toBe(false);
    });

    it('allows ratios above 100 %', () => {
      expect(allows('PC300', subject({ postCount: 30, loginCount: 10 }))).toBe(true);
      expect(allows('PC301', subject({ postCount: 30, loginCount: 10 }))).toBe(false);
    });

    it('counts no logins as 0 %', () => {
      expect(allows('PC0', subject({ loginCount: 0, postCount: 4 }))).toBe(true);
      expect(allows('PC1', subject({ loginCount: 0, postCount: 4 }))).toBe(false);
    });
  });

  describe('PV', () => {
    it('holds when the property has exactly the value', () => {
      expect(allows('PV[theme,dark]')).toBe(true);
    });

    it('fails for another value, another case, or a missing property', () => {
      expect(allows('PV[theme,light]')).toBe(false);
      expect(allows('PV[theme,Dark]')).toBe(false);
      expect(allows('PV[language,dark]')).toBe(false);
      expect(allows('PV[theme,dark]', subject({ properties: {} }))).toBe(false);
    });

    it('never matches inherited object members', () => {
      expect(allows('PV[constructor,x]')).toBe(false);
      expect(allows('PV[__proto__,x]')).toBe(false);
      expect(allows('PV[toString,x]')).toBe(false);
    });
  });

  describe('WD (UTC day of week, 0 = Sunday)', () => {
    it('holds only on the given day', () => {
      // NOW is a Wednesday (3)
      expect(allows('WD2')).toBe(false);
      expect(allows('WD3')).toBe(true);
      expect(allows('WD4')).toBe(false);
      expect(allows('WD[0,3,6]')).toBe(true);
      expect(allows('WD[0,6]')).toBe(false);
    });

    it('uses UTC, not local time', () => {
      // 23:30 on Saturday UTC is already Sunday east of UTC.
      const saturdayLate = new Date('2024-05-18T23:30:00.000Z');
      expect(allows('WD6', base, saturdayLate)).toBe(true);
      expect(allows('WD0', base, new Date('2024-05-19T00:00:00.000Z'))).toBe(true);
    });
  });

  describe('MM (UTC minutes past midnight ≥ n)', () => {
    it('compares minutes past midnight with n', () => {
      // 10:30 UTC = 630
      expect(allows('MM629')).toBe(true);
      expect(allows('MM630')).toBe(true);
      expect(allows('MM631')).toBe(false);
    });

    it('is 0 at midnight and 1439 at 23:59', () => {
      expect(allows('MM0', base, new Date('2024-05-15T00:00:00.000Z'))).toBe(true);
      expect(allows('MM1', base, new Date('2024-05-15T00:00:59.999Z'))).toBe(false);
      expect(allows('MM1439', base, new Date('2024-05-15T23:59:00.000Z'))).toBe(true);
      expect(allows('MM1440', base, new Date('2024-05-15T23:59:59.999Z'))).toBe(false);
    });
  });

  describe('SC', () => {
    it('holds only for a request that came over TLS', () => {
      expect(allows('SC', subject({ isSecure: true }))).toBe(true);
      expect(allows('SC', subject({ isSecure: false }))).toBe(false);
    });
  });

  describe.each(['LC', 'NN', 'TH', 'TW', 'TT', 'TM', 'EC', 'AF'])('terminal-only %s', (code) => {
    it('is always false over HTTP, with or without an argument', () => {
      expect(allows(code)).toBe(false);
      expect(allows(`${code}0`)).toBe(false);
      expect(allows(`${code} 1`)).toBe(false);
    });

    it('is true when negated', () => {
      expect(allows(`!${code}`)).toBe(true);
    });
  });

  describe('operators', () => {
    // T is true for the base subject, F is false.
    const T = 'GM[users]';
    const F = 'GM[sysops]';
    const truth: Readonly<Record<string, boolean>> = { [T]: true, [F]: false };
    const pairs = [
      [T, T],
      [T, F],
      [F, T],
      [F, F],
    ] as const;

    it.each(pairs)('%s & %s follows the AND truth table', (a, b) => {
      expect(allows(`${a}&${b}`)).toBe(truth[a] === true && truth[b] === true);
      expect(allows(`${a} ${b}`)).toBe(truth[a] === true && truth[b] === true);
    });

    it.each(pairs)('%s | %s follows the OR truth table', (a, b) => {
      expect(allows(`${a}|${b}`)).toBe(truth[a] === true || truth[b] === true);
    });

    it.each([T, F])('!%s follows the NOT truth table', (a) => {
      expect(allows(`!${a}`)).toBe(truth[a] !== true);
      expect(allows(`!!${a}`)).toBe(truth[a] === true);
    });

    it('evaluates A|B&C as A|(B&C), not (A|B)&C', () => {
      // A true, B true, C false: A|(B&C) = true, (A|B)&C = false
      expect(allows('GM[users]|ID7&GM[sysops]')).toBe(true);
      expect(allows('(GM[users]|ID7)&GM[sysops]')).toBe(false);
    });

    it('evaluates !A&B as (!A)&B, not !(A&B)', () => {
      // A false, B false: (!A)&B = false, !(A&B) = true
      expect(allows('!GM[sysops]&GM[banned]')).toBe(false);
      expect(allows('!(GM[sysops]&GM[banned])')).toBe(true);
    });

    it('evaluates the spec examples', () => {
      expect(allows('GM[sysops]|ID1')).toBe(false);
      expect(allows('GM[sysops]|ID1', subject({ userId: 1 }))).toBe(true);
      expect(allows('!GM[banned]')).toBe(true);
      expect(allows('!GM[banned]', subject({ groups: ['users', 'banned'] }))).toBe(false);
    });

    it('evaluates a nested expression', () => {
      const acs = '(GM[sysops] | (GM[users] NC 10 !GM[banned])) & SC';
      expect(allows(acs)).toBe(true);
      expect(allows(acs, subject({ loginCount: 9 }))).toBe(false);
      expect(allows(acs, subject({ isSecure: false }))).toBe(false);
      expect(allows(acs, subject({ groups: ['sysops'], loginCount: 0 }))).toBe(true);
    });
  });
});

describe('compileAcs', () => {
  it('allows every subject when the ACS is absent or blank', () => {
    for (const source of [undefined, '', '   ']) {
      const acs = compileAcs(source, 'message area "general" (acs.read)');
      expect(acs.allows(subject({ groups: [] }), NOW)).toBe(true);
    }
    expect(compileAcs(undefined, 'x').source).toBe('');
  });

  it('keeps the source and evaluates it against subject and time', () => {
    const acs = compileAcs('GM[users] WD3', 'message area "general" (acs.read)');
    expect(acs.source).toBe('GM[users] WD3');
    expect(acs.allows(base, NOW)).toBe(true);
    expect(acs.allows(base, new Date('2024-05-16T10:30:00.000Z'))).toBe(false);
    expect(acs.allows(subject({ groups: [] }), NOW)).toBe(false);
  });

  it('names the owner and the position when the ACS does not parse', () => {
    expect(() => compileAcs('GM[a]|ID1)', 'message area "general" (acs.read)')).toThrow(
      new Error('invalid ACS for message area "general" (acs.read): unexpected ")" at position 9'),
    );
  });

  it('names an unknown code', () => {
    expect(() => compileAcs('XX5', 'file area "uploads" (acs.download)')).toThrow(
      'invalid ACS for file area "uploads" (acs.download): unknown ACS code "XX" at position 0',
    );
  });
});
