import type { AcsSubject } from './acs-evaluator.js';
import { evaluateAcs } from './acs-evaluator.js';
import type { AcsExpression } from './acs-parser.js';
import { AcsSyntaxError, parseAcs } from './acs-parser.js';

export type { AcsSubject } from './acs-evaluator.js';
export type { AcsCondition, AcsExpression, AcsTerminalCode, AcsThresholdCode } from './acs-parser.js';

/** An ACS parsed once at start-up and checked on every request. */
export interface CompiledAcs {
  /** The ACS as configured; `''` when it was absent. */
  readonly source: string;
  /** Whether an authenticated subject passes the ACS at `now`. */
  allows(subject: AcsSubject, now: Date): boolean;
}

/**
 * Parses a configured ACS. Absent or blank means every authenticated user.
 * `what` names the owner for the error message, e.g. `message area "general" (acs.read)`.
 *
 * @throws Error `invalid ACS for message area "general" (acs.read): unexpected ")" at position 7`,
 *   so a broken ACS stops start-up instead of silently allowing or denying everyone.
 */
export function compileAcs(source: string | undefined, what: string): CompiledAcs {
  const text = source ?? '';
  let expression: AcsExpression;
  try {
    expression = parseAcs(text);
  } catch (error) {
    if (error instanceof AcsSyntaxError) {
      throw new Error(`invalid ACS for ${what}: ${error.message}`, { cause: error });
    }
    throw error;
  }
  return Object.freeze({
    source: text,
    allows: (subject: AcsSubject, now: Date) => evaluateAcs(expression, subject, now),
  });
}
