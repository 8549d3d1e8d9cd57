import fc from 'fast-check';

/** One generated request, with what the generator knows about it. */
export class FuzzCase {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly payload: string | Buffer | undefined,
    /** Who the credential headers make the caller (`anonymous`, `alice`, `garbage credential` …). */
    readonly identity: string,
    /** A valid credential of a fixture user was sent. */
    readonly isAuthenticated: boolean,
    /** Why the request is against the operation's schema, or null when it is not known to be. */
    readonly violation: string | null,
    /** What each generator did, for the reader of a failure. */
    readonly labels: readonly string[],
  ) {}

  /** A rough size, to keep the smallest example of each finding. */
  get size(): number {
    const headerBytes = Object.entries(this.headers).reduce((sum, [key, value]) => sum + key.length + value.length, 0);
    return this.url.length + headerBytes + (this.payload?.length ?? 0);
  }

  /** fast-check prints counterexamples with this, so a 1 MiB body does not flood the report. */
  [fc.toStringMethod](): string {
    return describeCase(this);
  }
}

/** Shortens `text` to `max` characters, saying how long it was. */
export function truncate(text: string, max = 300): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length.toLocaleString('en-US')} chars)`;
}

function describePayload(payload: string | Buffer): string {
  const text = typeof payload === 'string' ? payload : payload.toString('latin1');
  const escaped = JSON.stringify(truncate(text, 240));
  return `${payload.length.toLocaleString('en-US')} ${typeof payload === 'string' ? 'chars' : 'bytes'}: ${escaped}`;
}

/** A multi-line, copy-pasteable description of a case (long values shortened). */
export function describeCase(fuzzCase: FuzzCase): string {
  const headers = Object.fromEntries(
    Object.entries(fuzzCase.headers).map(([key, value]) => [key, truncate(value, 120)]),
  );
  const lines = [
    `${fuzzCase.method} ${truncate(fuzzCase.url, 400)}`,
    `  caller: ${fuzzCase.identity}`,
    `  headers: ${JSON.stringify(headers)}`,
  ];
  if (fuzzCase.payload !== undefined) lines.push(`  body (${describePayload(fuzzCase.payload)})`);
  if (fuzzCase.violation !== null) lines.push(`  against the schema: ${fuzzCase.violation}`);
  lines.push(`  generated: ${fuzzCase.labels.join('; ')}`);
  return lines.join('\n');
}
