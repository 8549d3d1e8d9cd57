import fc from 'fast-check';
import type { FuzzPools, Identity } from './fuzz-pools.js';
import { headerText } from './hostile-values.js';

/** The credential and other headers of a request. */
export interface HeaderPiece {
  readonly headers: Readonly<Record<string, string>>;
  readonly identity: string;
  readonly isAuthenticated: boolean;
  readonly label: string;
}

/** `{"alg":"none"}` over `{"sub":"1"}`: must never be taken for a signed token. */
const UNSIGNED_JWT = 'eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiIxIiwiaXNzIjoiYmF1ZCJ9.';

const MALFORMED_CREDENTIALS: readonly Readonly<Record<string, string>>[] = [
  { authorization: 'Bearer' },
  { authorization: 'Bearer ' },
  { authorization: 'Basic YWxpY2U6Y29ycmVjdCBob3JzZSBiYXR0ZXJ5' },
  { authorization: 'Digest username="alice"' },
  { authorization: 'Token abc' },
  { authorization: 'Bearer a.b.c' },
  { authorization: 'Bearer a b' },
  { authorization: 'Bearer null' },
  { authorization: `Bearer ${UNSIGNED_JWT}` },
  { authorization: `Bearer baud_${'A'.repeat(43)}` },
  { authorization: `Bearer ${'x'.repeat(8000)}` },
  { authorization: 'Bearer \u00ff\u00fe' },
  { 'x-baud-api-key': `baud_${'A'.repeat(43)}` },
  { 'x-baud-api-key': 'not-a-key' },
  { 'x-baud-api-key': 'baud_' },
  { 'x-baud-api-key': `baud_${'é'.repeat(43)}` },
];

/** A valid credential changed so that it no longer verifies. */
function tampered(identity: Identity, how: 'append' | 'truncate' | 'flip'): Record<string, string> {
  const [name, value] = Object.entries(identity.headers)[0] ?? ['authorization', 'Bearer x'];
  if (how === 'append') return { [name]: `${value}x` };
  if (how === 'truncate') return { [name]: value.slice(0, -2) };
  // Not the last characters: in base64url those may only carry padding bits.
  const at = Math.min(value.length - 4, 'Bearer '.length + 10);
  const flipped = value[at] === 'A' ? 'B' : 'A';
  return { [name]: `${value.slice(0, at)}${flipped}${value.slice(at + 1)}` };
}

function deadCredentialArbitrary(pools: FuzzPools): fc.Arbitrary<HeaderPiece> {
  const valid = pools.identities.filter((identity) => identity.isAuthenticated);
  const asPiece = (headers: Readonly<Record<string, string>>, label: string): HeaderPiece => ({
    headers,
    identity: `bad credential (${label})`,
    isAuthenticated: false,
    label: `bad credential (${label})`,
  });
  const options: fc.Arbitrary<HeaderPiece>[] = [
    fc.constantFrom(...MALFORMED_CREDENTIALS).map((headers) => asPiece(headers, 'malformed')),
    fc
      .tuple(fc.constantFrom('authorization', 'x-baud-api-key'), headerText)
      .map(([name, text]) => asPiece({ [name]: name === 'authorization' ? `Bearer ${text}` : text }, 'random')),
  ];
  if (valid.length > 0) {
    options.push(
      fc
        .tuple(fc.constantFrom(...valid), fc.constantFrom<'append' | 'truncate' | 'flip'>('append', 'truncate', 'flip'))
        .map(([identity, how]) => asPiece(tampered(identity, how), `${identity.name}'s, ${how}`)),
    );
    // A token in Authorization and a bad key in X-Baud-API-Key: the key is read first.
    const bearers = valid.filter((identity) => identity.headers.authorization !== undefined);
    if (bearers.length > 0) {
      options.push(
        fc
          .constantFrom(...bearers)
          .map((identity) =>
            asPiece({ ...identity.headers, 'x-baud-api-key': 'baud_not_a_key' }, `${identity.name}'s token + bad key`),
          ),
      );
    }
  }
  if (pools.deadCredentials.length > 0) {
    options.push(fc.constantFrom(...pools.deadCredentials).map((identity) => asPiece(identity.headers, identity.name)));
  }
  return fc.oneof(...options);
}

function identityPiece(identity: Identity): HeaderPiece {
  return {
    headers: identity.headers,
    identity: identity.name,
    isAuthenticated: identity.isAuthenticated,
    label: `as ${identity.name}`,
  };
}

function extraHeadersArbitrary(pools: FuzzPools): fc.Arbitrary<Record<string, string>> {
  const cookieName = pools.refreshCookieName;
  const cookie = fc.oneof(
    ...(pools.refreshTokens.length > 0
      ? [fc.constantFrom(...pools.refreshTokens).map((token) => `${cookieName}=${token}`)]
      : []),
    headerText.map((text) => `${cookieName}=${text}`),
    fc.constantFrom(
      `${cookieName}=`,
      `${cookieName}=%ZZ`,
      `${cookieName}="quoted"`,
      `${cookieName}=a; ${cookieName}=b`,
      `${cookieName}=${'x'.repeat(5000)}`,
      '=; ;',
      'a=b; c',
    ),
  );
  // Mostly within or just past the fixture files (tens to hundreds of bytes).
  const position = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 600 }) },
    fc.integer({ min: -5, max: 100_000 }),
    fc.constantFrom('99999999999999999999', '9007199254740993', '', '-', '1e3', '0x1'),
  );
  const range = fc.oneof(
    // Well-formed ranges over the fixture files' sizes: first-last, open-ended, suffix.
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.nat(64), fc.nat(64))
        .map(([one, other]) => `bytes=${Math.min(one, other)}-${Math.max(one, other)}`),
    },
    fc.nat(64).map((start) => `bytes=${start}-`),
    fc.nat(64).map((length) => `bytes=-${length}`),
    fc.tuple(position, position).map(([start, end]) => `bytes=${start}-${end}`),
    fc.constantFrom(
      'bytes=0-0',
      'bytes=0-',
      'bytes=-1',
      'bytes=-0',
      'bytes=5-2',
      'bytes=0-1,3-4',
      'bytes=0-1, 0-1',
      'items=0-1',
      'bytes=',
      'bytes=--',
      'BYTES=0-1',
      'bytes= 0-1',
    ),
    headerText,
  );
  const etag = pools.etags.length > 0 ? fc.constantFrom(...pools.etags) : fc.constant('"none"');
  const ifNoneMatch = fc.oneof(
    etag,
    etag.map((tag) => `W/${tag}`),
    etag.map((tag) => `"other", ${tag}`),
    fc.constantFrom('*', '""', '"x"', 'unquoted', `"${'f'.repeat(5000)}"`),
    headerText,
  );
  const contentType = fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      'application/problem+json',
      'application/vnd.api+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary=other',
      'application/octet-stream',
      '',
      ';',
      'application/json;;;',
      '*/*',
    ),
    headerText,
  );
  const valueArbitraries = {
    cookie,
    range,
    'if-none-match': ifNoneMatch,
    'if-range': fc.oneof(etag, fc.constantFrom('Wed, 21 Oct 2015 07:28:00 GMT', 'garbage')),
    'content-type': contentType,
    accept: fc.constantFrom('application/json', 'text/html', 'application/xml', '*/*', '', 'application/problem+json'),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', '*;q=0', 'x'.repeat(200)),
    origin: fc.constantFrom('https://evil.example', 'null', 'http://localhost', ''),
    'x-forwarded-for': fc.constantFrom('203.0.113.9', '::1', '1.1.1.1, 2.2.2.2', 'garbage'),
    'x-http-method-override': fc.constantFrom('DELETE', 'PUT', 'GET'),
    'transfer-encoding': fc.constantFrom('chunked', 'gzip', 'identity'),
  };
  // At most three at once, so that each one's effect (Range against If-None-Match …) shows.
  return fc
    .tuple(fc.record(valueArbitraries), fc.subarray(Object.keys(valueArbitraries), { maxLength: 3 }))
    .map(([values, names]) => Object.fromEntries(names.map((name) => [name, values[name as keyof typeof values]])));
}

/**
 * Who calls and with which headers. Not hostile: one of the fixture callers (anonymous, users,
 * the sysop, API keys). Hostile: also broken or dead credentials, plus garbage Cookie, Range,
 * If-None-Match, Content-Type and other headers.
 */
export function headerArbitrary(pools: FuzzPools, isHostile: boolean): fc.Arbitrary<HeaderPiece> {
  // Authenticated callers twice as often as anonymous ones: most routes do more for them.
  const caller = fc.oneof(
    ...pools.identities.map((identity) => ({
      weight: identity.isAuthenticated ? 2 : 1,
      arbitrary: fc.constant(identityPiece(identity)),
    })),
  );
  if (!isHostile) return caller;
  const credential = fc.oneof(
    { weight: 3, arbitrary: caller },
    { weight: 1, arbitrary: deadCredentialArbitrary(pools) },
  );
  return fc.tuple(credential, extraHeadersArbitrary(pools)).map(([piece, extra]) => ({
    ...piece,
    headers: { ...extra, ...piece.headers },
    label: `${piece.label}${Object.keys(extra).length > 0 ? ` + ${Object.keys(extra).join(', ')}` : ''}`,
  }));
}
