import { readdirSync, readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { describe, expect, it } from 'vitest';
import { BadRequestError, ERROR_CODES, NotFoundError, UnauthorizedError } from '../src/errors.js';

const CODES = Object.keys(ERROR_CODES);

/** `domain.kebab-case`: lower-case words joined by hyphens, one dot between the domain and the name. */
const WELL_FORMED = /^[a-z]+(?:-[a-z]+)*\.[a-z]+(?:-[a-z]+)*$/;

/** The "Problem codes" table of docs/api-notes.md as `ERROR_CODES` says it must read. */
function problemCodesTable(): string {
  const rows = Object.entries(ERROR_CODES).map(
    ([code, { status, detail }]) => `| \`${code}\` | ${status} | ${detail} |`,
  );
  return ['| Code | Status | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The table of the "Problem codes" section of docs/api-notes.md, as written. */
function documentedTable(): string {
  const notes = readFileSync(new URL('../docs/api-notes.md', import.meta.url), 'utf8');
  const section = notes.split('\n### Problem codes\n')[1]?.split('\n#')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .join('\n');
}

describe('the table of error codes', () => {
  it('declares each code once, as the source reads (a repeated key would silently replace the first)', () => {
    const source = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8');
    const table = source.slice(source.indexOf('export const ERROR_CODES'), source.indexOf('} as const'));
    const declared = [...table.matchAll(/^ {2}'([^']+)': \{/gm)].map((match) => match[1]);
    expect(declared).toEqual(CODES);
    expect(new Set(CODES.map((code) => code.replace(/[.-]/g, ''))).size).toBe(CODES.length);
  });

  it('names every code domain.kebab-case', () => {
    expect(CODES.filter((code) => !WELL_FORMED.test(code))).toEqual([]);
  });

  it('gives every code an error status with a reason phrase and a detail that is a sentence', () => {
    for (const [code, { status, detail }] of Object.entries(ERROR_CODES)) {
      expect(status >= 400 && status <= 599 && STATUS_CODES[status] !== undefined, code).toBe(true);
      expect(detail, code).toMatch(/^[A-Z`].*\.$/);
    }
  });

  it('is listed exactly, with status and meaning, in docs/api-notes.md "Problem codes"', () => {
    expect(documentedTable()).toBe(problemCodesTable());
  });

  it('has no code that nothing raises', () => {
    const srcDir = new URL('../src/', import.meta.url);
    const named = new Set<string>();
    for (const file of readdirSync(srcDir, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file === 'errors.ts') continue;
      const text = readFileSync(new URL(file, srcDir), 'utf8');
      for (const match of text.matchAll(/'([a-z-]+\.[a-z-]+)'/g)) named.add(match[1] ?? '');
    }
    expect(CODES.filter((code) => !named.has(code))).toEqual([]);
  });
});

describe('a typed error', () => {
  it('takes its status from its code, and the code default detail when it names none', () => {
    const error = new UnauthorizedError('auth.required');
    expect(error).toMatchObject({ code: 'auth.required', status: 401, detail: 'Authentication is required.' });
    expect(error.message).toBe('Authentication is required.');
    expect(error.headers).toEqual({ 'www-authenticate': 'Bearer realm="baud"' });
  });

  it('keeps the detail it is given', () => {
    const error = new NotFoundError('message.area-not-found', 'No message area "x".');
    expect(error).toMatchObject({ code: 'message.area-not-found', status: 404, detail: 'No message area "x".' });
    expect(new BadRequestError('request.invalid-body', 'subject is required', []).status).toBe(400);
  });
});
