import type { AcsCondition, AcsExpression } from './acs-parser.js';

/**
 * What an ACS is checked against: an authenticated user as seen by one request.
 * Anonymous callers never reach the evaluator; deciding what they may do is the caller's job.
 */
export interface AcsSubject {
  readonly userId: number;
  readonly groups: readonly string[];
  readonly accountStatus: number;
  /** `null` when the user never gave a birth date; `AG` is then false. */
  readonly ageYears: number | null;
  readonly loginCount: number;
  readonly postCount: number;
  readonly accountCreatedAt: Date;
  readonly uploadCount: number;
  readonly downloadCount: number;
  readonly uploadBytes: number;
  readonly downloadBytes: number;
  readonly achievementCount: number;
  readonly achievementPoints: number;
  readonly properties: Readonly<Record<string, string>>;
  /** The request came over TLS, directly or through a trusted proxy. */
  readonly isSecure: boolean;
}

const MS_PER_DAY = 86_400_000;

/**
 * Whether `numerator / denominator`, as a percentage, is at least `percent`.
 * Cross-multiplies rather than dividing so that e.g. 29 of 100 meets 29 % exactly
 * (29 / 100 * 100 is 28.999… in floating point).
 * A zero denominator is settled as 100 % when there is any numerator and 0 % otherwise (not
 * infinity): someone who uploaded but never downloaded meets `NR 100` but not `NR 101`.
 */
function ratioAtLeast(numerator: number, denominator: number, percent: number): boolean {
  if (denominator === 0) return (numerator > 0 ? 100 : 0) >= percent;
  return numerator * 100 >= percent * denominator;
}

/** Whole days since the account was created; a creation date in the future counts as 0. */
function accountAgeDays(createdAt: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - createdAt.getTime()) / MS_PER_DAY));
}

function evaluateCondition(condition: AcsCondition, subject: AcsSubject, now: Date): boolean {
  switch (condition.code) {
    case 'GM':
      return condition.groups.some((group) => subject.groups.includes(group));
    case 'ID':
      return condition.userIds.includes(subject.userId);
    case 'AS':
      return subject.accountStatus === condition.accountStatus;
    case 'PV':
      // hasOwn keeps `PV[constructor,…]` from reaching Object.prototype.
      return (
        Object.hasOwn(subject.properties, condition.name) && subject.properties[condition.name] === condition.value
      );
    case 'WD':
      return condition.weekdays.includes(now.getUTCDay());
    case 'SC':
      return subject.isSecure;
    case 'AG':
      return subject.ageYears !== null && subject.ageYears >= condition.min;
    case 'NC':
      return subject.loginCount >= condition.min;
    case 'NP':
      return subject.postCount >= condition.min;
    case 'AA':
      return accountAgeDays(subject.accountCreatedAt, now) >= condition.min;
    case 'UP':
      return subject.uploadCount >= condition.min;
    case 'DL':
      return subject.downloadCount >= condition.min;
    case 'BU':
      return subject.uploadBytes >= condition.min;
    case 'BD':
      return subject.downloadBytes >= condition.min;
    case 'NR':
      return ratioAtLeast(subject.uploadCount, subject.downloadCount, condition.min);
    case 'KR':
      return ratioAtLeast(subject.uploadBytes, subject.downloadBytes, condition.min);
    case 'PC':
      // No logins yet means a 0 % post/call ratio rather than 100 %: posting needs a call first.
      return subject.loginCount === 0
        ? condition.min <= 0
        : subject.postCount * 100 >= condition.min * subject.loginCount;
    case 'AC':
      return subject.achievementCount >= condition.min;
    case 'AP':
      return subject.achievementPoints >= condition.min;
    case 'MM':
      return now.getUTCHours() * 60 + now.getUTCMinutes() >= condition.min;
    case 'LC':
    case 'NN':
    case 'TH':
    case 'TW':
    case 'TT':
    case 'TM':
    case 'EC':
    case 'AF':
      // Terminal-only codes describe a telnet/SSH session, which an HTTP request never is.
      return false;
  }
}

/**
 * Decides whether `subject` satisfies `expr` at the instant `now` (used by `WD`, `MM` and `AA`,
 * all in UTC). Pure: no I/O, no clock of its own.
 *
 * @example evaluateAcs(parseAcs('GM[sysops]|ID1'), subject, new Date()) // true for user 1
 */
export function evaluateAcs(expr: AcsExpression, subject: AcsSubject, now: Date): boolean {
  switch (expr.kind) {
    case 'everyone':
      return true;
    case 'and':
      return expr.operands.every((operand) => evaluateAcs(operand, subject, now));
    case 'or':
      return expr.operands.some((operand) => evaluateAcs(operand, subject, now));
    case 'not':
      return !evaluateAcs(expr.operand, subject, now);
    case 'condition':
      return evaluateCondition(expr, subject, now);
  }
}
