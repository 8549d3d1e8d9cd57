import { FtnFormatError, quoteForError } from './ftn-format-error.js';

/**
 * A wall-clock time as FTN writes it: the sender's local time, with no zone (the TZUTC kludge,
 * FTS-4008, says how far it is from UTC). `month` is 1–12 here, whatever the format stores.
 */
export interface FtnDateTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const WEEKDAYS = 'Sun|Mon|Tue|Wed|Thu|Fri|Sat';
/** FTS-0001: `01 Jan 86  02:34:56` (two spaces before the time; readers meet one as well). */
const FTS_0001_DATE = /^([0-9]{1,2}) ([A-Za-z]{3}) ([0-9]{2}) +([0-9]{2}):([0-9]{2}):([0-9]{2})$/;
/** The other format FTS-0001 lists: `Mon  1 Jan 86 02:34`, no seconds. */
const WEEKDAY_DATE = new RegExp(`^(?:${WEEKDAYS}) +([0-9]{1,2}) ([A-Za-z]{3}) ([0-9]{2}) ([0-9]{2}):([0-9]{2})$`);
const TZUTC = /^([-+]?)([0-9]{2})([0-9]{2})$/;

/**
 * Two-digit years: 80–99 are 1980–1999, 00–79 are 2000–2079. FidoNet began in 1984, so no
 * message is older than 1980, and the format cannot say anything past 2079.
 */
const FIRST_YEAR = 1980;
const LAST_YEAR = 2079;

const pad2 = (value: number) => String(value).padStart(2, '0');

/** Whether `d` is a date and time that exists (any year); what the writers check. */
export function isValidFtnDateTime(d: FtnDateTime): boolean {
  const isWhole = [d.year, d.month, d.day, d.hour, d.minute, d.second].every(Number.isInteger);
  return (
    isWhole &&
    d.month >= 1 &&
    d.month <= 12 &&
    d.day >= 1 &&
    d.day <= new Date(Date.UTC(d.year, d.month, 0)).getUTCDate() &&
    d.hour >= 0 &&
    d.hour <= 23 &&
    d.minute >= 0 &&
    d.minute <= 59 &&
    d.second >= 0 &&
    d.second <= 59
  );
}

/**
 * The packed message's date, `DD Mon YY  HH:MM:SS` (19 characters; the packet adds the NUL).
 * Throws `FtnFormatError` for a date that does not exist or a year outside 1980–2079.
 *
 * @example formatFtnDateTime({ year: 2026, month: 11, day: 7, hour: 9, minute: 5, second: 0 }) // '07 Nov 26  09:05:00'
 */
export function formatFtnDateTime(dateTime: FtnDateTime): string {
  if (!isValidFtnDateTime(dateTime) || dateTime.year < FIRST_YEAR || dateTime.year > LAST_YEAR) {
    throw new FtnFormatError(
      `cannot write the date ${JSON.stringify(dateTime)}: no such date in ${FIRST_YEAR}–${LAST_YEAR}`,
    );
  }
  const { year, month, day, hour, minute, second } = dateTime;
  return `${pad2(day)} ${MONTHS[month - 1]} ${pad2(year % 100)}  ${pad2(hour)}:${pad2(minute)}:${pad2(second)}`;
}

/**
 * Reads a packed message's date in either format FTS-0001 lists (`01 Jan 86  02:34:56`, or
 * `Mon  1 Jan 86 02:34` with no seconds); null for anything else or a date that does not exist.
 * The date is informational (the tosser may fall back to the time it arrived), so a bad one is
 * not an error.
 */
export function parseFtnDateTime(text: string): FtnDateTime | null {
  const full = FTS_0001_DATE.exec(text);
  const withWeekday = full ? null : WEEKDAY_DATE.exec(text);
  const parts = full ?? (withWeekday ? [...withWeekday, '00'] : null);
  if (!parts) return null;
  const [, day = '', monthName = '', yy = '', hour = '', minute = '', second = ''] = parts;
  const month = MONTHS.findIndex((name) => name.toLowerCase() === monthName.toLowerCase()) + 1;
  const shortYear = Number(yy);
  const dateTime: FtnDateTime = {
    year: shortYear >= FIRST_YEAR % 100 ? 1900 + shortYear : 2000 + shortYear,
    month,
    day: Number(day),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
  };
  return isValidFtnDateTime(dateTime) ? dateTime : null;
}

/** The wall-clock time at `utcOffsetMinutes` east of UTC when it is `instant`. */
export function ftnDateTimeOf(instant: Date, utcOffsetMinutes: number): FtnDateTime {
  const local = new Date(instant.getTime() + utcOffsetMinutes * 60_000);
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
  };
}

/** The instant a wall-clock time at `utcOffsetMinutes` east of UTC names: the reverse of `ftnDateTimeOf`. */
export function instantOf(dateTime: FtnDateTime, utcOffsetMinutes: number): Date {
  const { year, month, day, hour, minute, second } = dateTime;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second) - utcOffsetMinutes * 60_000);
}

/**
 * A TZUTC value (FTS-4008): `[-]hhmm`, negative west of UTC, never a `+`.
 *
 * @example formatTzutc(-210) // '-0330'
 */
export function formatTzutc(utcOffsetMinutes: number): string {
  if (!Number.isInteger(utcOffsetMinutes) || Math.abs(utcOffsetMinutes) >= 24 * 60) {
    throw new FtnFormatError(`cannot write the UTC offset ${utcOffsetMinutes}: not whole minutes within a day`);
  }
  const magnitude = Math.abs(utcOffsetMinutes);
  const sign = utcOffsetMinutes < 0 ? '-' : '';
  return `${sign}${pad2(Math.floor(magnitude / 60))}${pad2(magnitude % 60)}`;
}

/**
 * Reads a TZUTC (or TZUTCINFO) value into minutes east of UTC; a leading `+`, which FTS-4008
 * forbids but asks readers to accept, is read too. Throws `FtnFormatError` for anything else.
 */
export function parseTzutc(value: string): number {
  const match = TZUTC.exec(value.trim());
  const hours = Number(match?.[2]);
  const minutes = Number(match?.[3]);
  if (!match || hours > 23 || minutes > 59) {
    throw new FtnFormatError(`TZUTC ${quoteForError(value)} is not [-]hhmm`);
  }
  const magnitude = hours * 60 + minutes;
  // `-0000` is UTC: 0, not -0.
  return match[1] === '-' && magnitude > 0 ? -magnitude : magnitude;
}
