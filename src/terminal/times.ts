/** A stored timestamp as screens show it, in UTC (the board has no time zone of its own): `2026-11-23 12:00`. */
export function dateTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.toISOString().slice(0, 10)} ${date.toISOString().slice(11, 16)}`;
}

/** The day of a stored timestamp, UTC: `2026-11-23`. */
export function dateOnly(iso: string): string {
  return dateTime(iso).slice(0, 10);
}
