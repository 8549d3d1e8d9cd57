import fc from 'fast-check';
import { buildMultipart, type FormPart } from '../../support/multipart.js';
import type { FuzzPools } from './fuzz-pools.js';
import { hostileText, plainText } from './hostile-values.js';
import type { BodySpec, Operation } from './openapi-operations.js';
import { allowedTypes, containsNul, type JsonSchema, schemaVerdict } from './schema-verdict.js';

/** A generated request body, before the final Content-Type is known. */
export interface BodyPiece {
  readonly payload: string | Buffer | undefined;
  /** The Content-Type the generator chose; a hostile header may replace it. */
  readonly contentType: string | undefined;
  /** The media type the payload really is (`application/json` text, `multipart/form-data` bytes …). */
  readonly payloadMediaType: string | null;
  readonly boundary: string | null;
  /** Why the payload is against the schema of its media type, or null. */
  readonly contentViolation: string | null;
  readonly label: string;
}

const NO_BODY: BodyPiece = {
  payload: undefined,
  contentType: undefined,
  payloadMediaType: null,
  boundary: null,
  contentViolation: null,
  label: 'no body',
};

/** Fixed, so that a seed replays byte-identical multipart bodies. */
const BOUNDARY = 'baudfuzz7MA4YWxkTrZu0gW';

// ---------------------------------------------------------------------------------------------
// JSON values from a schema

function constantsOf(schema: JsonSchema): unknown[] {
  if (schema.const !== undefined) return [schema.const];
  return schema.enum ? [...schema.enum] : [];
}

/** Values that satisfy `schema`, preferring real names from the fixture for known field names. */
export function valueArbitrary(schema: JsonSchema, fieldName: string, pools: FuzzPools): fc.Arbitrary<unknown> {
  const generated = generatedValue(schema, pools);
  const known = (pools.knownValues[fieldName] ?? []).filter((value) => schemaVerdict(schema, value) === 'valid');
  if (known.length === 0) return generated;
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(known[0]) },
    { weight: 3, arbitrary: fc.constantFrom(...known) },
    { weight: 1, arbitrary: generated },
  );
}

function generatedValue(schema: JsonSchema, pools: FuzzPools): fc.Arbitrary<unknown> {
  const constants = constantsOf(schema);
  if (constants.length > 0) return fc.constantFrom(...constants);
  const members = schema.anyOf ?? schema.oneOf;
  if (members && members.length > 0) return fc.oneof(...members.map((member) => valueArbitrary(member, '', pools)));
  const types = allowedTypes(schema);
  const options = (types.length > 0 ? types : ['string']).map((type) => valueOfType(type, schema, pools));
  return fc.oneof(...options);
}

function valueOfType(type: string, schema: JsonSchema, pools: FuzzPools): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string': {
      if (schema.format === 'uuid') return fc.uuid();
      if (schema.format === 'date-time') {
        return fc
          .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
          .map((date) => date.toISOString());
      }
      const minLength = schema.minLength ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 80, 80));
      return fc.oneof(
        plainText.filter((text) => [...text].length >= minLength && [...text].length <= maxLength),
        fc.string({ unit: 'grapheme', minLength, maxLength }),
      );
    }
    case 'integer':
      return fc.integer({
        min: Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER),
        max: Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? valueArbitrary(schema.items, '', pools) : fc.jsonValue({ maxDepth: 1 }), {
        maxLength: 3,
      });
    case 'object': {
      const properties = Object.entries(schema.properties ?? {});
      const model = Object.fromEntries(properties.map(([name, member]) => [name, valueArbitrary(member, name, pools)]));
      return fc.record(model, { requiredKeys: [...(schema.required ?? [])] });
    }
    default:
      return fc.constant(null);
  }
}

/** One sample of every JSON type; the wrong ones for a schema are those it rejects. */
const SAMPLES: readonly unknown[] = [
  '42',
  'true',
  '',
  'text',
  42,
  0,
  -1,
  1.5,
  1e308,
  true,
  false,
  null,
  [],
  ['x'],
  [1, 2],
  {},
  { a: 1 },
];

/** Values of a JSON type `schema` does not allow (`"42"` for an integer, `["x"]` for a string …). */
function wrongValueArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> | null {
  const wrong = SAMPLES.filter((sample) => schemaVerdict(schema, sample) === 'invalid');
  return wrong.length > 0 ? fc.constantFrom(...wrong) : null;
}

// ---------------------------------------------------------------------------------------------
// JSON bodies

interface JsonText {
  readonly text: string;
  readonly label: string;
  /** Set when the verdict must not be computed from the text (parsers may differ on it). */
  readonly isVerdictUnknown?: boolean;
}

function jsonText(text: string, label: string, isVerdictUnknown = false): JsonText {
  return { text, label, isVerdictUnknown };
}

/** The JSON text of `value` without its outer braces, for splicing raw members in. */
function innerMembers(value: unknown): string {
  const text = JSON.stringify(value);
  return text.startsWith('{') ? text.slice(1, -1) : '';
}

function spliced(...members: string[]): string {
  return `{${members.filter((member) => member !== '').join(',')}}`;
}

function withoutKey(value: Record<string, unknown>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([name]) => name !== key));
}

const INVALID_JSON: readonly string[] = [
  '',
  ' ',
  '{',
  '}',
  '[',
  '{"a":}',
  '{"a" 1}',
  'nul',
  'NaN',
  'undefined',
  "{'a':1}",
  '{"a":1}x',
  '{"a":1}{"b":2}',
  '{"a":1,}',
  '[1,]',
  '{"a":"\u0000"}',
  '{"a":"\n"}',
  '/* comment */ {}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":Infinity}',
  'true false',
  '\u0000',
];

const DEPTHS = fc.oneof(
  fc.integer({ min: 1, max: 12_000 }),
  fc.constantFrom(16, 32, 33, 64, 100, 128, 1000, 5000, 10_000),
);

function deepText(depth: number, shape: 'array' | 'object'): string {
  return shape === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A JSON object whose first string field is padded so the whole text is `targetBytes` long (±1). */
function sizedText(base: Record<string, unknown>, field: string, fill: string, targetBytes: number): string {
  const rest = innerMembers(withoutKey(base, field));
  const frame = `{"${field}":""${rest === '' ? '' : `,${rest}`}}`;
  const fillBytes = Buffer.byteLength(fill, 'utf8');
  const count = Math.max(0, Math.floor((targetBytes - Buffer.byteLength(frame, 'utf8')) / fillBytes));
  return `{"${field}":"${fill.repeat(count)}"${rest === '' ? '' : `,${rest}`}}`;
}

function jsonTextArbitrary(spec: BodySpec, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<JsonText> {
  const { schema } = spec;
  const valid = valueArbitrary(schema, '', pools);
  const validText = valid.map((value) => jsonText(JSON.stringify(value) ?? 'null', 'valid JSON'));
  if (!isHostile) return validText;

  const asObject = valid.map((value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {},
  );
  const properties = Object.entries(schema.properties ?? {});
  const required = schema.required ?? [];
  const stringFields = properties.filter(([, member]) => allowedTypes(member).includes('string')).map(([name]) => name);
  // Wrong JSON types are the likeliest to slip through (a coercing validator), so they get the
  // most runs; everything else about the body has a share of its own.
  const options: fc.WeightedArbitrary<JsonText>[] = [{ weight: 3, arbitrary: validText }];
  const add = (weight: number, ...arbitraries: fc.Arbitrary<JsonText>[]) => {
    for (const arbitrary of arbitraries) options.push({ weight, arbitrary });
  };

  const wrongFields = properties.flatMap(([name, member]) => {
    const wrong = wrongValueArbitrary(member);
    if (!wrong) return [];
    return [
      fc
        .tuple(asObject, wrong)
        .map(([value, bad]) => jsonText(JSON.stringify({ ...value, [name]: bad }), `wrong JSON type at /${name}`)),
    ];
  });
  if (wrongFields.length > 0) add(6, fc.oneof(...wrongFields));
  if (required.length > 0) {
    add(
      1,
      fc
        .tuple(asObject, fc.constantFrom(...required))
        .map(([value, name]) => jsonText(JSON.stringify(withoutKey(value, name)), `without required /${name}`)),
    );
  }
  add(
    1,
    fc
      .tuple(
        asObject,
        fc.constantFrom('extra', 'isSysop', 'groups', 'userId', 'fromUserName', 'SUBJECT', 'subject ', ''),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([value, name, extra]) => jsonText(JSON.stringify({ ...value, [name]: extra }), `unknown field "${name}"`)),
    fc
      .constantFrom('null', '[]', '"text"', '42', 'true', '{}', '[{}]', '""', '-0', '1e400')
      .map((text) => jsonText(text, 'whole body of another JSON type')),
    valid.map((value) => jsonText(JSON.stringify([value]), 'valid body wrapped in an array')),
    fc
      .tuple(DEPTHS, fc.constantFrom<'array' | 'object'>('array', 'object'))
      .map(([depth, shape]) => jsonText(deepText(depth, shape), `${shape}s nested ${depth} deep`)),
    fc
      .tuple(asObject, DEPTHS, fc.constantFrom(...(stringFields.length > 0 ? stringFields : ['nested'])))
      .map(([value, depth, name]) =>
        jsonText(
          spliced(`"${name}":${deepText(depth, 'array')}`, innerMembers(withoutKey(value, name))),
          `/${name} nested ${depth} deep`,
        ),
      ),
    // Duplicate keys: parsers disagree on which one wins, so no verdict.
    fc
      .tuple(asObject, fc.constantFrom(...(properties.length > 0 ? properties.map(([name]) => name) : ['a'])))
      .chain(([value, name]) =>
        fc
          .constantFrom<unknown>(42, 'dup', null, [], {})
          .map((first) =>
            jsonText(
              spliced(`"${name}":${JSON.stringify(first)}`, innerMembers(value)),
              `duplicate key "${name}"`,
              true,
            ),
          ),
      ),
    fc
      .tuple(
        asObject,
        fc.constantFrom(
          '"__proto__":{"isSysop":true,"polluted":"yes"}',
          '"constructor":{"prototype":{"polluted":"yes"}}',
          '"__proto__":null',
          '"a":{"__proto__":{"polluted":"yes"}}',
        ),
        fc.boolean(),
      )
      .map(([value, member, isFirst]) => {
        const members = isFirst ? [member, innerMembers(value)] : [innerMembers(value), member];
        return jsonText(spliced(...members), `prototype key ${member.slice(0, 16)}…`);
      }),
    fc.tuple(asObject, fc.constantFrom<'key' | 'value'>('key', 'value')).map(([value, where]) => {
      const field = stringFields[0];
      const text =
        where === 'value' && field !== undefined
          ? JSON.stringify({ ...value, [field]: 'a\u0000b' })
          : JSON.stringify({ ...value, 'x\u0000y': 1 });
      return jsonText(text, `NUL in a ${where}`);
    }),
    fc
      .tuple(
        asObject,
        fc.oneof(fc.integer({ min: -48, max: 48 }), fc.constantFrom(-1, 0, 1, 4096)),
        fc.constantFrom('a', 'é'),
      )
      .map(([value, delta, fill]) =>
        jsonText(
          sizedText(value, stringFields[0] ?? 'padding', fill, pools.bodyLimitBytes + delta),
          `body of bodyLimit${delta >= 0 ? '+' : ''}${delta} bytes`,
        ),
      ),
    fc.constantFrom(...INVALID_JSON).map((text) => jsonText(text, 'not JSON')),
    // A byte-order mark: RFC 8259 lets parsers ignore it, so no verdict.
    valid.map((value) => jsonText(`\uFEFF${JSON.stringify(value)}`, 'JSON after a byte-order mark', true)),
  );
  if (stringFields.length > 0) {
    add(
      2,
      fc
        .tuple(asObject, fc.constantFrom(...stringFields), hostileText)
        .map(([value, name, text]) => jsonText(JSON.stringify({ ...value, [name]: text }), `hostile text at /${name}`)),
    );
  }
  return fc.oneof(...options);
}

/** Why JSON text is against `spec`, judged on what the server receives (the text as UTF-8). */
function jsonViolation(spec: BodySpec, text: string, bodyLimitBytes: number): string | null {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > bodyLimitBytes) return `the body is ${bytes.length} bytes, over the ${bodyLimitBytes}-byte limit`;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'the body is not JSON';
  }
  if (containsNul(value)) return 'the body holds a NUL character';
  return schemaVerdict(spec.schema, value) === 'invalid' ? 'the body is against its schema' : null;
}

function jsonBodyArbitrary(spec: BodySpec, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<BodyPiece> {
  const contentType = isHostile
    ? fc.constantFrom('application/json', 'application/json; charset=utf-8', 'Application/JSON')
    : fc.constant('application/json');
  return fc.tuple(jsonTextArbitrary(spec, pools, isHostile), contentType).map(([json, type]) => ({
    payload: json.text,
    contentType: type,
    payloadMediaType: 'application/json',
    boundary: null,
    contentViolation: json.isVerdictUnknown ? null : jsonViolation(spec, json.text, pools.bodyLimitBytes),
    label: json.label,
  }));
}

// ---------------------------------------------------------------------------------------------
// multipart/form-data bodies

function multipartPiece(parts: readonly FormPart[], label: string, violation: string | null): BodyPiece {
  return {
    payload: buildMultipart(parts, BOUNDARY).body,
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    payloadMediaType: 'multipart/form-data',
    boundary: BOUNDARY,
    contentViolation: violation,
    label,
  };
}

function multipartBodyArbitrary(spec: BodySpec, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<BodyPiece> {
  const properties = Object.entries(spec.schema.properties ?? {});
  const required = spec.schema.required ?? [];
  const fileFields = properties.filter(([, member]) => member.format === 'binary').map(([name]) => name);
  const textFields = properties.filter(([, member]) => member.format !== 'binary').map(([name]) => name);
  const content = fc.oneof(
    ...(pools.uploadContents.length > 0 ? [fc.constantFrom(...pools.uploadContents)] : []),
    fc.uint8Array({ maxLength: 1024 }),
  );
  const fileName = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('readme.txt', 'demo.zip', 'FILE_ID.DIZ', 'notes.nfo', 'photo.JPG') },
    { weight: isHostile ? 2 : 0, arbitrary: hostileText },
  );
  const text = isHostile ? fc.oneof(plainText, hostileText) : plainText;
  const filePart = (name: string) =>
    fc.tuple(fileName, content).map(([file, value]): FormPart => ({ name, fileName: file, value }));
  const textPart = (name: string) => text.map((value): FormPart => ({ name, value }));
  const validParts = fc
    .tuple(
      fc.tuple(...fileFields.map(filePart)),
      fc.tuple(...textFields.map((name) => fc.option(textPart(name), { nil: undefined }))),
    )
    .map(([files, texts]) => [...texts.filter((part): part is FormPart => part !== undefined), ...files]);
  const valid = validParts.map((parts) => multipartPiece(parts, 'valid multipart', null));
  if (!isHostile) return valid;

  const requiredFiles = fileFields.filter((name) => required.includes(name));
  const options: fc.Arbitrary<BodyPiece>[] = [
    validParts.map((parts) =>
      multipartPiece(
        parts.filter((part) => part.fileName === undefined),
        'multipart without its file part',
        requiredFiles.length > 0 ? `the required part "${requiredFiles[0]}" is missing` : null,
      ),
    ),
    fc
      .tuple(validParts, filePart(fileFields[0] ?? 'file'))
      .map(([parts, extra]) => multipartPiece([...parts, extra], 'multipart with two file parts', null)),
    fc
      .tuple(validParts, fc.constantFrom('extra', '', 'file\u0000', 'desc'), text)
      .map(([parts, name, value]) => multipartPiece([{ name, value }, ...parts], `extra field "${name}"`, null)),
    fc
      .tuple(validParts, fc.oneof(fc.integer({ min: -16, max: 16 }), fc.constantFrom(-1, 0, 1)))
      .map(([parts, delta]) => {
        const size = Math.max(0, pools.uploadLimitBytes + delta);
        const sized = parts.map((part) =>
          part.fileName === undefined ? part : { ...part, value: new Uint8Array(size).fill(0x61) },
        );
        return multipartPiece(
          sized,
          `file of maxUploadBytes${delta >= 0 ? '+' : ''}${delta} bytes`,
          delta > 0 ? `the file is over the ${pools.uploadLimitBytes}-byte upload limit` : null,
        );
      }),
    fc.tuple(valid, fc.double({ min: 0, max: 1, noNaN: true })).map(([piece, fraction]) => {
      const bytes = piece.payload as Buffer;
      // Cut before the closing delimiter is complete.
      const cut = Math.floor(fraction * (bytes.length - `--${BOUNDARY}--`.length - 3));
      return {
        ...piece,
        payload: bytes.subarray(0, cut),
        label: 'multipart cut short',
        contentViolation: 'the multipart body is cut short',
      };
    }),
    valid.map((piece) => ({ ...piece, contentType: 'multipart/form-data', label: 'multipart without a boundary' })),
    fc.constantFrom('', 'not multipart at all', `--${BOUNDARY}--\r\n`).map((payload) => ({
      ...NO_BODY,
      payload,
      contentType: `multipart/form-data; boundary=${BOUNDARY}`,
      payloadMediaType: 'multipart/form-data',
      boundary: BOUNDARY,
      contentViolation:
        payload === `--${BOUNDARY}--\r\n` && requiredFiles.length === 0
          ? null
          : 'the multipart body is empty or broken',
      label: `broken multipart ${JSON.stringify(payload)}`,
    })),
  ];
  return fc.oneof({ weight: 4, arbitrary: valid }, ...options.map((arbitrary) => ({ weight: 1, arbitrary })));
}

// ---------------------------------------------------------------------------------------------
// Bodies where none is documented, and the body part as a whole

/** Bodies sent to operations that document none: nothing about them is against a schema. */
function strayBodyArbitrary(pools: FuzzPools): fc.Arbitrary<BodyPiece> {
  const stray = (payload: string, contentType: string | undefined, label: string): BodyPiece => ({
    payload,
    contentType,
    payloadMediaType: contentType?.split(';')[0] ?? null,
    boundary: null,
    contentViolation: null,
    label,
  });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(NO_BODY) },
    fc
      .jsonValue({ maxDepth: 3 })
      .map((value) => stray(JSON.stringify(value) ?? 'null', 'application/json', 'stray JSON')),
    fc.constant(stray('', 'application/json', 'stray empty JSON')),
    fc.constant(stray('{', 'application/json', 'stray broken JSON')),
    DEPTHS.map((depth) => stray(deepText(depth, 'array'), 'application/json', `stray JSON nested ${depth} deep`)),
    fc.constant(stray('x'.repeat(pools.bodyLimitBytes + 1), 'application/json', 'stray body over bodyLimit')),
    fc.constant(stray('hello', 'text/plain', 'stray text')),
    fc.constant(stray('a=b&c=d', 'application/x-www-form-urlencoded', 'stray form')),
    fc.constant(stray('{"a":1}', undefined, 'stray body without Content-Type')),
  );
}

function bodyForSpec(spec: BodySpec, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<BodyPiece> {
  if (spec.mediaType === 'application/json') return jsonBodyArbitrary(spec, pools, isHostile);
  if (spec.mediaType === 'multipart/form-data') return multipartBodyArbitrary(spec, pools, isHostile);
  // A media type this suite does not know how to build: send some bytes, judge nothing.
  return fc.constant({
    ...NO_BODY,
    payload: 'x',
    contentType: spec.mediaType,
    payloadMediaType: spec.mediaType,
    label: spec.mediaType,
  });
}

/**
 * The request body: for each documented media type, valid bodies and (hostile) bodies against
 * the schema in every way this suite knows; a body of the wrong media type, or none at all.
 */
export function bodyArbitrary(operation: Operation, pools: FuzzPools, isHostile: boolean): fc.Arbitrary<BodyPiece> {
  if (operation.bodies.length === 0) return isHostile ? strayBodyArbitrary(pools) : fc.constant(NO_BODY);
  const documented = fc.oneof(...operation.bodies.map((spec) => bodyForSpec(spec, pools, isHostile)));
  if (!isHostile) return operation.isBodyRequired ? documented : fc.oneof(documented, fc.constant(NO_BODY));
  return fc.oneof(
    { weight: 6, arbitrary: documented },
    { weight: 1, arbitrary: fc.constant({ ...NO_BODY, label: 'no body at all' }) },
    { weight: 1, arbitrary: strayBodyArbitrary(pools).filter((piece) => piece.payload !== undefined) },
  );
}

function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0]?.trim().toLowerCase() ?? '';
}

function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=("?)([^";]*)\1/i.exec(contentType);
  return match?.[2] || null;
}

/**
 * Why the body, sent with `contentType` (the generator's, or a hostile header's), is against the
 * operation's request body, or null.
 */
export function bodyViolation(operation: Operation, body: BodyPiece, contentType: string | undefined): string | null {
  if (operation.bodies.length === 0) return null;
  if (body.payload === undefined) return operation.isBodyRequired ? 'the required body is missing' : null;
  if (contentType === undefined) return 'the body has no Content-Type';
  const mediaType = mediaTypeOf(contentType);
  if (!operation.bodies.some((spec) => spec.mediaType === mediaType)) {
    return `the media type ${JSON.stringify(mediaType)} is not documented here`;
  }
  if (mediaType !== body.payloadMediaType) return `the body is not ${mediaType}`;
  if (mediaType === 'multipart/form-data' && boundaryOf(contentType) !== body.boundary) {
    return 'the Content-Type names no boundary, or another one';
  }
  return body.contentViolation;
}
