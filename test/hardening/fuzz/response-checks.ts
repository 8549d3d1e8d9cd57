import { STATUS_CODES } from 'node:http';
import { ERROR_CODES } from '../../../src/errors.js';
import type { FuzzCase } from './fuzz-case.js';

/**
 * The rules every answer is held to. The first four fail a property on the spot (and fast-check
 * shrinks the request); the header rules are collected over the whole run and reported by a
 * test of their own, so one missing header does not hide the server errors the others find.
 */
export type Rule =
  | 'never a 5xx'
  | 'errors are problem+json'
  | 'a rejected request changes no state'
  | 'a request against the schema is rejected'
  | 'nosniff on every answer'
  | 'no-store for authenticated callers';

export const HEADER_RULES: ReadonlySet<Rule> = new Set<Rule>([
  'nosniff on every answer',
  'no-store for authenticated callers',
]);

export interface Violation {
  readonly rule: Rule;
  /** What was wrong, without request-specific noise, so equal findings group together. */
  readonly kind: string;
  readonly detail: string;
}

/** The parts of an inject response the checks read. */
export interface ResponseView {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  readonly body: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

function header(response: ResponseView, name: string): string | undefined {
  const value = response.headers[name];
  return value === undefined ? undefined : [value].flat().join(', ');
}

function problemViolations(response: ResponseView, apiPrefix: string): Violation[] {
  const status = response.statusCode;
  const violations: Violation[] = [];
  const fail = (kind: string, detail: string) => violations.push({ rule: 'errors are problem+json', kind, detail });
  const contentType = header(response, 'content-type');
  if (contentType !== PROBLEM_CONTENT_TYPE) {
    fail(`content-type ${contentType ?? '(none)'}`, `content-type is ${JSON.stringify(contentType ?? null)}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    fail('body is not JSON', 'the body is not JSON');
    return violations;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    fail('body is not an object', 'the body is not a JSON object');
    return violations;
  }
  const problem = body as Record<string, unknown>;
  const expectedTitle = STATUS_CODES[status];
  if (problem.status !== status) fail('status member differs', `status member ${JSON.stringify(problem.status)}`);
  if (problem.title !== expectedTitle) {
    fail(
      'title is not the reason phrase',
      `title ${JSON.stringify(problem.title)}, not ${JSON.stringify(expectedTitle)}`,
    );
  }
  if (problem.type !== `${apiPrefix}/errors/${status}`)
    fail('type member wrong', `type ${JSON.stringify(problem.type)}`);
  if (typeof problem.detail !== 'string') fail('detail missing', `detail ${JSON.stringify(problem.detail)}`);
  const entry = Object.hasOwn(ERROR_CODES, String(problem.code))
    ? ERROR_CODES[problem.code as keyof typeof ERROR_CODES]
    : undefined;
  if (entry?.status !== status) fail('code unknown or of another status', `code ${JSON.stringify(problem.code)}`);
  return violations;
}

/** Checks one answer against every rule except the state rule, which needs the database (see the suite). */
export function checkResponse(fuzzCase: FuzzCase, response: ResponseView, apiPrefix: string): Violation[] {
  const status = response.statusCode;
  const violations: Violation[] = [];
  if (status >= 500) {
    violations.push({ rule: 'never a 5xx', kind: `${status}`, detail: `answered ${status}` });
  }
  if (status >= 400) violations.push(...problemViolations(response, apiPrefix));
  if (status < 400 && fuzzCase.violation !== null) {
    violations.push({
      rule: 'a request against the schema is rejected',
      kind: fuzzCase.violation.replace(/=.*? is against/, ' is against'),
      detail: `answered ${status} although ${fuzzCase.violation}`,
    });
  }
  if (header(response, 'x-content-type-options') !== 'nosniff') {
    violations.push({
      rule: 'nosniff on every answer',
      kind: `${status}`,
      detail: `x-content-type-options is ${JSON.stringify(header(response, 'x-content-type-options') ?? null)}`,
    });
  }
  // A 401 means the server did not take the credential: that caller is not authenticated.
  if (fuzzCase.isAuthenticated && status !== 401) {
    const cacheControl = header(response, 'cache-control') ?? '';
    if (!/(^|,)\s*no-store\s*(,|$)/i.test(cacheControl)) {
      violations.push({
        rule: 'no-store for authenticated callers',
        kind: `${status}`,
        detail: `cache-control is ${JSON.stringify(cacheControl || null)}`,
      });
    }
  }
  return violations;
}
