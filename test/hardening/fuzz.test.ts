import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../support/test-board.js';
import { describeResponse, FindingLog } from './fuzz/findings.js';
import { API, createFuzzBoard, type FuzzBoard, fuzzOperations } from './fuzz/fuzz-board.js';
import { describeCase, type FuzzCase } from './fuzz/fuzz-case.js';
import type { Operation } from './fuzz/openapi-operations.js';
import { trackPendingWork } from './fuzz/pending-work.js';
import { type Focus, focusesOf, requestArbitrary } from './fuzz/request-arbitrary.js';
import { checkResponse, HEADER_RULES, type Violation } from './fuzz/response-checks.js';
import {
  createStateFingerprint,
  type Fingerprint,
  fingerprintChanges,
  type StateFingerprint,
} from './fuzz/state-fingerprint.js';

/**
 * The standing property-based fuzz suite: every operation of the app's OpenAPI document (read
 * at run time, so a new route is fuzzed without touching this file), on SQLite and PostgreSQL,
 * with requests generated from each operation's schemas and deliberately against them, by
 * anonymous callers, users, the sysop and API keys. For every request:
 *   1. never a 5xx;
 *   2. every status ≥ 400 is problem+json `{ type, title, status, detail }` with the status and
 *      its reason phrase;
 *   3. a rejected request (≥ 400) changes no state (database, file storage, prototypes), but
 *      for the login throttle's own count of a rejected login;
 *   4. every answer has `X-Content-Type-Options: nosniff`, and every answer to an authenticated
 *      caller (one that sent a valid credential, whatever the route does with it)
 *      `Cache-Control: no-store` — collected over the run and reported by the last test, so a
 *      missing header does not hide the server errors the other properties look for;
 *   5. a request known to be against the documented schema is rejected (≥ 400): never coerced
 *      into shape (see fuzz/schema-verdict.ts for what counts as "known").
 *
 * Environment: BAUD_FUZZ_SEED (default fixed), BAUD_FUZZ_RUNS (runs per operation, split over
 * its focuses), BAUD_FUZZ_SURVEY=1 (never stop at a failure: run everything and print every
 * distinct finding with its smallest request). On failure fast-check prints the property's own
 * seed (derived from the run's, see `seedFor`) and the shrunk counterexample; the run's seed is
 * in the summary line, and rerunning with that BAUD_FUZZ_SEED replays the run.
 */
const SETTINGS = Object.freeze({
  seed: Number(process.env.BAUD_FUZZ_SEED ?? 20_261_123),
  runsPerOperation: Number(process.env.BAUD_FUZZ_RUNS ?? 300),
  isSurvey: process.env.BAUD_FUZZ_SURVEY === '1',
});

/**
 * After a property first fails, fast-check shrinks by rerunning smaller requests. Past this many
 * reruns the predicate passes without sending anything, which ends shrinking with the smallest
 * counterexample so far: a failure reports in seconds, not minutes.
 */
const MAX_SHRINK_RUNS = 150;
const TEST_TIMEOUT_MS = 120_000;

const OPERATIONS: readonly Operation[] = await fuzzOperations();

describe('the fuzzed operations', () => {
  it('are every operation of the OpenAPI document', () => {
    expect(OPERATIONS.length).toBeGreaterThan(0);
    expect(new Set(OPERATIONS.map((operation) => operation.id)).size).toBe(OPERATIONS.length);
  });
});

/**
 * Each property's seed: the run's seed mixed with the property's name (FNV-1a), so that the
 * operations do not all draw the same sequence of choices, while BAUD_FUZZ_SEED still replays
 * the whole run.
 */
function seedFor(name: string): number {
  let hash = 0x811c9dc5;
  for (const char of name) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193);
  return (hash ^ SETTINGS.seed) | 0;
}

/**
 * What a node's webhook sender writes on its own, whatever the request in flight: its attempts
 * (a webhook a fuzz case made may point anywhere) and each webhook's delivery state.
 */
const WEBHOOK_SENDER_COLUMNS = [
  'delivered_through',
  'attempts',
  'failing_since',
  'consecutive_failures',
  'next_attempt_at',
  'lease_owner',
  'lease_until',
  'deactivated_at',
  'deactivation_reason',
];
function isWebhookSenderState(key: string): boolean {
  return (
    key.startsWith('webhook_deliveries') ||
    WEBHOOK_SENDER_COLUMNS.some((column) => key.startsWith(`webhooks.${column}`))
  );
}

/**
 * A login, or a request that asks the password again (changing it, turning two-factor login on
 * or off): throttled alike, so a refused guess keeps its slots.
 */
function isLoginAttempt(operation: Operation, fuzzCase: FuzzCase): boolean {
  if (operation.pathTemplate === `${API}/users/me/totp`)
    return fuzzCase.method === 'POST' || fuzzCase.method === 'DELETE';
  if (operation.pathTemplate === `${API}/users/me/password`) return fuzzCase.method === 'PUT';
  return fuzzCase.method === 'POST' && operation.pathTemplate === `${API}/auth/login`;
}

describeEachDialect('fuzz: every operation of the OpenAPI document', (dialect) => {
  let fuzz: FuzzBoard;
  let fingerprint: StateFingerprint;
  let settled: () => Promise<void>;
  /** The state after the last request, when that request was rejected (so nothing may have moved since). */
  let settledState: Fingerprint | null = null;
  const findings = new FindingLog();
  let caseCount = 0;
  const statusCounts = new Map<number, number>();
  let startedAt = 0;

  beforeAll(async () => {
    startedAt = performance.now();
    fuzz = await createFuzzBoard(dialect);
    fingerprint = await createStateFingerprint(fuzz.board);
    settled = trackPendingWork(fuzz.board.board);
  });

  afterAll(async () => {
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    console.log(
      `fuzz [${dialect}]: ${caseCount.toLocaleString('en-US')} cases over ${OPERATIONS.length} operations, ` +
        `${findings.size} failures (${seconds} s, seed ${SETTINGS.seed})`,
    );
    const statuses = [...statusCounts].sort(([left], [right]) => left - right);
    console.log(`fuzz [${dialect}] answers: ${statuses.map(([status, count]) => `${status}×${count}`).join(' ')}`);
    if (SETTINGS.isSurvey && findings.size > 0) {
      console.log(`fuzz [${dialect}] findings:\n\n${FindingLog.describe(findings.select(() => true))}`);
    }
    await fingerprint?.close();
    await fuzz?.board.close();
  });

  /** Sends one case and checks every rule; records each violation and returns them. */
  async function exchange(operation: Operation, fuzzCase: FuzzCase): Promise<Violation[]> {
    const before = settledState ?? (await fingerprint.take());
    // An event stream that opened answers only when it ends: end it soon after it opens.
    const streamEnder =
      operation.pathTemplate === `${API}/events` ? setInterval(() => fuzz.board.app.endEventStreams(), 20) : undefined;
    const response = await fuzz.board.app
      .inject({
        method: fuzzCase.method as InjectOptions['method'],
        url: fuzzCase.url,
        headers: fuzzCase.headers,
        ...(fuzzCase.payload === undefined ? {} : { payload: fuzzCase.payload }),
      })
      .finally(() => clearInterval(streamEnder));
    caseCount += 1;
    statusCounts.set(response.statusCode, (statusCounts.get(response.statusCode) ?? 0) + 1);
    await settled();
    const violations = checkResponse(fuzzCase, response, API);
    const isRejected = response.statusCode >= 400;
    // Only a rejected request is held to "no change"; after any other, the next case looks afresh.
    settledState = null;
    if (isRejected) {
      const after = await fingerprint.take();
      settledState = after;
      // The one exception: a rejected login (or password asked again) counts against the login
      // throttle (its `login_*` table) by design — that is how repeated failures end in 429.
      const isThrottleState = (key: string) => isLoginAttempt(operation, fuzzCase) && key.startsWith('login_');
      const changes = fingerprintChanges(before, after, (key) => isThrottleState(key) || isWebhookSenderState(key));
      if (changes.length > 0) {
        violations.push({
          rule: 'a rejected request changes no state',
          kind: changes.map((change) => change.split(':')[0]).join(', '),
          detail: `state changed: ${changes.join('; ')}`,
        });
      }
    }
    for (const violation of violations) findings.record(operation.id, fuzzCase, response, violation);
    const fatal = violations.filter((violation) => !HEADER_RULES.has(violation.rule));
    if (fatal.length > 0 && !SETTINGS.isSurvey) {
      const broken = fatal.map((violation) => `${violation.rule}: ${violation.detail}`).join('\n  ');
      throw new Error(`${operation.id}\n  ${broken}\n${describeCase(fuzzCase)}\n${describeResponse(response)}`);
    }
    return violations;
  }

  async function fuzzOperation(operation: Operation, focus: Focus, numRuns: number): Promise<void> {
    let hasFailed = false;
    let shrinkRuns = 0;
    const property = fc.asyncProperty(requestArbitrary(operation, focus, fuzz.pools), async (fuzzCase) => {
      if (hasFailed && ++shrinkRuns > MAX_SHRINK_RUNS) return;
      try {
        await exchange(operation, fuzzCase);
      } catch (error) {
        hasFailed = true;
        throw error;
      }
    });
    const seed = seedFor(`${operation.id} ${focus}`);
    await fc.assert(property, { seed, numRuns, includeErrorInReport: true });
  }

  for (const operation of OPERATIONS) {
    describe(operation.id, () => {
      for (const { focus, share } of focusesOf(operation)) {
        const numRuns = Math.max(1, Math.round(SETTINGS.runsPerOperation * share));
        it(`holds with a hostile ${focus}`, () => fuzzOperation(operation, focus, numRuns), TEST_TIMEOUT_MS);
      }
    });
  }

  it('answered every request with nosniff, and every authenticated caller with no-store', () => {
    const headerFindings = findings.select((finding) => HEADER_RULES.has(finding.rule));
    expect(headerFindings.length, `\n${FindingLog.summarize(headerFindings)}\n`).toBe(0);
  });
});
