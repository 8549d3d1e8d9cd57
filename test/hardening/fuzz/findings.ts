import { describeCase, type FuzzCase, truncate } from './fuzz-case.js';
import type { ResponseView, Rule, Violation } from './response-checks.js';

/** One distinct failure: a rule broken by an operation in one way, with its smallest example. */
export interface Finding {
  readonly operationId: string;
  readonly rule: Rule;
  readonly kind: string;
  readonly status: number;
  count: number;
  example: FuzzCase;
  detail: string;
  response: string;
}

/** Describes an answer for a report: status, the headers that matter, the body (shortened). */
export function describeResponse(response: ResponseView): string {
  const pick = ['content-type', 'x-content-type-options', 'cache-control', 'allow', 'www-authenticate', 'retry-after'];
  const headers = Object.fromEntries(
    pick.filter((name) => response.headers[name] !== undefined).map((name) => [name, response.headers[name]]),
  );
  return `→ ${response.statusCode} ${JSON.stringify(headers)}\n  ${truncate(response.body, 400)}`;
}

/**
 * The distinct failures of a run, grouped by operation, rule, kind and status; each keeps the
 * smallest request that showed it.
 */
export class FindingLog {
  readonly #findings = new Map<string, Finding>();

  record(operationId: string, fuzzCase: FuzzCase, response: ResponseView, violation: Violation): void {
    const key = [operationId, violation.rule, violation.kind, response.statusCode].join(' | ');
    const existing = this.#findings.get(key);
    if (existing) {
      existing.count += 1;
      if (fuzzCase.size < existing.example.size) {
        existing.example = fuzzCase;
        existing.detail = violation.detail;
        existing.response = describeResponse(response);
      }
      return;
    }
    this.#findings.set(key, {
      operationId,
      rule: violation.rule,
      kind: violation.kind,
      status: response.statusCode,
      count: 1,
      example: fuzzCase,
      detail: violation.detail,
      response: describeResponse(response),
    });
  }

  get size(): number {
    return this.#findings.size;
  }

  select(predicate: (finding: Finding) => boolean): Finding[] {
    return [...this.#findings.values()].filter(predicate);
  }

  /**
   * A shorter report of `findings`: one block per rule, status and detail across operations,
   * naming the operations and showing the smallest example of all.
   */
  static summarize(findings: readonly Finding[]): string {
    const groups = new Map<string, Finding[]>();
    for (const finding of findings) {
      const key = `${finding.rule} — ${finding.status}: ${finding.detail}`;
      groups.set(key, [...(groups.get(key) ?? []), finding]);
    }
    return [...groups]
      .map(([key, members]) => {
        const smallest = members.reduce((best, finding) => (finding.example.size < best.example.size ? finding : best));
        const cases = members.reduce((sum, finding) => sum + finding.count, 0);
        const operations = [...new Set(members.map((finding) => finding.operationId))];
        return (
          `✗ ${key} (${cases}× over ${operations.length} operations: ${operations.join(', ')})\n` +
          `${describeCase(smallest.example)}\n${smallest.response}`
        );
      })
      .join('\n\n');
  }

  /** A readable report of `findings`, one block each. */
  static describe(findings: readonly Finding[]): string {
    return findings
      .map(
        (finding) =>
          `✗ ${finding.operationId}: ${finding.rule} — ${finding.detail} (${finding.count}×)\n` +
          `${describeCase(finding.example)}\n${finding.response}`,
      )
      .join('\n\n');
  }
}
