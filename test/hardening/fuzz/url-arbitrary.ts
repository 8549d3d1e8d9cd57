import fc from 'fast-check';
import { truncate } from './fuzz-case.js';
import { type FuzzPools, knownValuesFor } from './fuzz-pools.js';
import { encodeUrlText, hostileText, isWellFormed, NOT_INTEGER_TEXTS, RAW_URL_GARBAGE } from './hostile-values.js';
import type { Operation, ParamSpec } from './openapi-operations.js';
import { allowedTypes, type JsonSchema, textParamVerdict } from './schema-verdict.js';

/** A generated part of a request: what was made, and why it is against the schema (if it is). */
export interface UrlPiece {
  readonly text: string;
  readonly violation: string | null;
  readonly label: string;
}

/** The `const` / `enum` values a schema allows, looking through `anyOf` / `oneOf`. */
function constantsOf(schema: JsonSchema): unknown[] {
  if (schema.const !== undefined) return [schema.const];
  if (schema.enum !== undefined) return [...schema.enum];
  const members = schema.anyOf ?? schema.oneOf;
  if (!members) return [];
  const constants = members.map(constantsOf);
  return constants.every((values) => values.length > 0) ? constants.flat() : [];
}

/** Text a URL parameter of `schema` accepts, generated from the schema alone. */
function schemaText(schema: JsonSchema): fc.Arbitrary<string> {
  const constants = constantsOf(schema);
  if (constants.length > 0) return fc.constantFrom(...constants.map(String));
  const types = allowedTypes(schema);
  if (types.includes('integer') || types.includes('number')) {
    const min = Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER);
    const max = Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER);
    return fc.integer({ min: Math.ceil(min), max: Math.floor(max) }).map(String);
  }
  if (types.includes('boolean')) return fc.constantFrom('true', 'false');
  if (schema.format === 'uuid') return fc.uuid();
  const minLength = Math.max(1, schema.minLength ?? 1);
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 24, 24));
  // `.` and `..` are dot segments: the URL would be normalised onto another route.
  return fc.string({ unit: 'grapheme-ascii', minLength, maxLength }).filter((text) => text !== '.' && text !== '..');
}

/** The first path segment below the API prefix: the scope of an operation's known values. */
export function scopeOf(operation: Operation): string {
  return operation.id.split(' ')[1]?.split('/')[1] ?? '';
}

/**
 * Text naming something real (from the fixture; the first, most useful value most often) or
 * generated from the schema; never against the schema.
 */
export function validParamText(param: ParamSpec, scope: string, pools: FuzzPools): fc.Arbitrary<string> {
  const generated = schemaText(param.schema);
  const known = knownValuesFor(pools, scope, param.name)
    .map(String)
    .filter((text) => textParamVerdict(param.schema, [text]) !== 'invalid');
  const [first] = known;
  if (first === undefined) return generated;
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(first) },
    { weight: 3, arbitrary: fc.constantFrom(...known) },
    { weight: 1, arbitrary: generated },
  );
}

/** Text meant to break a parameter: wrong types for numbers, edge-case Unicode, huge strings. */
function hostileParamText(param: ParamSpec): fc.Arbitrary<string> {
  const types = allowedTypes(param.schema);
  const isNumeric = types.includes('integer') || types.includes('number');
  return fc.oneof(
    { weight: isNumeric ? 4 : 1, arbitrary: fc.constantFrom(...NOT_INTEGER_TEXTS) },
    { weight: 4, arbitrary: hostileText },
    { weight: 1, arbitrary: fc.uuid().map((uuid) => `${uuid.toUpperCase()}`) },
  );
}

interface Segment {
  readonly encoded: string;
  /** What the server decodes, or null when it cannot decode it (bad percent-encoding). */
  readonly decoded: string | null;
  readonly kind: string;
}

function segmentOf(kind: string) {
  return (text: string): Segment => ({
    encoded: encodeUrlText(text),
    decoded: isWellFormed(text) ? text : null,
    kind,
  });
}

function segmentArbitrary(
  param: ParamSpec,
  scope: string,
  pools: FuzzPools,
  isHostile: boolean,
): fc.Arbitrary<Segment> {
  const valid = validParamText(param, scope, pools).map(segmentOf('valid'));
  if (!isHostile) return valid;
  return fc.oneof(
    { weight: 2, arbitrary: valid },
    { weight: 5, arbitrary: hostileParamText(param).map(segmentOf('hostile')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...RAW_URL_GARBAGE)
        .map((raw): Segment => ({ encoded: raw, decoded: null, kind: 'raw' })),
    },
  );
}

/**
 * The request path: each path parameter valid, or (hostile) of a wrong type, edge-case Unicode,
 * huge, a dot segment or broken percent-encoding.
 */
export function pathArbitrary(operation: Operation, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<UrlPiece> {
  const { pathParams, pathTemplate } = operation;
  if (pathParams.length === 0) return fc.constant({ text: pathTemplate, violation: null, label: 'path as documented' });
  const scope = scopeOf(operation);
  return fc.tuple(...pathParams.map((param) => segmentArbitrary(param, scope, pools, isHostile))).map((segments) => {
    let text = pathTemplate;
    let violation: string | null = null;
    const labels: string[] = [];
    segments.forEach((segment, index) => {
      const param = pathParams[index];
      if (param === undefined) return;
      // A replacer function: `$&` in a generated value must not be read as a pattern.
      text = text.replace(`{${param.name}}`, () => segment.encoded);
      labels.push(`path ${param.name} ${segment.kind}`);
      // An empty value or a dot segment routes elsewhere: no verdict on those.
      const { decoded } = segment;
      if (violation !== null || decoded === null || decoded === '' || decoded === '.' || decoded === '..') return;
      if (textParamVerdict(param.schema, [decoded]) === 'invalid') {
        violation = `path parameter ${param.name}=${JSON.stringify(truncate(decoded, 40))} is against its schema`;
      }
    });
    return { text, violation, label: labels.join(', ') };
  });
}

interface QueryEntry {
  readonly raw: string;
  /** Decoded name and value; null when the fuzzer sent something it cannot decode itself. */
  readonly name: string | null;
  readonly value: string | null;
}

function entryOf(name: string, value: string): QueryEntry {
  return {
    raw: `${encodeUrlText(name)}=${encodeUrlText(value)}`,
    name,
    value: isWellFormed(value) ? value : null,
  };
}

const RAW_QUERY_GARBAGE: readonly string[] = [
  '%ZZ',
  '%',
  '&',
  '=',
  '==',
  '=x',
  '%00=1',
  'a=%ED%A0%80',
  'a=%E0%A4%A',
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'a[b][c]=1',
  'a=1;b=2',
  '?',
];

function documentedEntries(
  param: ParamSpec,
  scope: string,
  pools: FuzzPools,
  isHostile: boolean,
): fc.Arbitrary<QueryEntry[]> {
  const valid = validParamText(param, scope, pools);
  if (!isHostile) return valid.map((value) => [entryOf(param.name, value)]);
  const hostile = hostileParamText(param);
  return fc.oneof(
    { weight: 2, arbitrary: valid.map((value) => [entryOf(param.name, value)]) },
    { weight: 4, arbitrary: hostile.map((value) => [entryOf(param.name, value)]) },
    // Repetition makes an array of what is documented as one value.
    {
      weight: 1,
      arbitrary: fc
        .array(fc.oneof(valid, hostile), { minLength: 2, maxLength: 3 })
        .map((values) => values.map((value) => entryOf(param.name, value))),
    },
    // `?limit` alone: present, with an empty value.
    {
      weight: 1,
      arbitrary: fc.constant<QueryEntry[]>([{ raw: encodeUrlText(param.name), name: param.name, value: '' }]),
    },
  );
}

const unknownEntry: fc.Arbitrary<QueryEntry> = fc.oneof(
  fc
    .tuple(fc.constantFrom('foo', '__proto__', 'constructor', 'limit[]', 'cursor[x]', 'a.b', 'LIMIT', ''), hostileText)
    .map(([name, value]) => entryOf(name, value)),
  fc.constantFrom(...RAW_QUERY_GARBAGE).map((raw): QueryEntry => ({ raw, name: null, value: null })),
);

function queryViolation(operation: Operation, entries: readonly QueryEntry[]): string | null {
  if (entries.some((entry) => entry.name?.includes('\u0000') || entry.value?.includes('\u0000'))) {
    return 'a query name or value holds a NUL character';
  }
  for (const param of operation.queryParams) {
    const own = entries.filter((entry) => entry.name === param.name);
    if (own.length === 0) continue;
    const values = own.map((entry) => entry.value);
    if (values.some((value) => value === null)) continue;
    if (textParamVerdict(param.schema, values as string[]) === 'invalid') {
      const shown = values.map((value) => truncate(value ?? '', 40));
      return `query ${param.name}=${JSON.stringify(shown.length === 1 ? shown[0] : shown)} is against its schema`;
    }
  }
  return null;
}

/**
 * The query string: documented parameters valid (or absent), or (hostile) of wrong types,
 * repeated, empty, plus unknown parameters and raw garbage.
 */
export function queryArbitrary(operation: Operation, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<UrlPiece> {
  const documented = operation.queryParams.map((param) =>
    fc.option(documentedEntries(param, scopeOf(operation), pools, isHostile), { nil: undefined, freq: 2 }),
  );
  const unknown = isHostile ? fc.array(unknownEntry, { maxLength: 3 }) : fc.constant([]);
  return fc.tuple(fc.tuple(...documented), unknown).map(([known, extra]) => {
    const entries = [...known.flatMap((group) => group ?? []), ...extra];
    const text = entries.length === 0 ? '' : `?${entries.map((entry) => entry.raw).join('&')}`;
    return {
      text,
      violation: queryViolation(operation, entries),
      label: entries.length === 0 ? 'no query' : `query ${isHostile ? 'hostile' : 'valid'} (${entries.length})`,
    };
  });
}
