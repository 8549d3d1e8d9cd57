/**
 * Whether a generated input is against the OpenAPI schema of the part it goes into, decided
 * independently of the server's own validator (so a validator bug cannot hide itself).
 *
 * Three answers, because the fuzzer must never accuse the server of accepting an input that was
 * in fact acceptable: `invalid` only when this subset of JSON Schema is sure, `unknown` for
 * keywords it does not model (the input is then checked by the other properties only).
 */
export type Verdict = 'valid' | 'invalid' | 'unknown';

/** The JSON Schema keywords the baud OpenAPI document uses (annotations ignored). */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly default?: unknown;
  readonly [keyword: string]: unknown;
}

/** Keywords that constrain values but are not modelled here: their presence makes a verdict `unknown`. */
const UNMODELLED = ['not', 'if', 'multipleOf', 'uniqueItems', 'contains', 'patternProperties', 'dependentRequired'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function and(...verdicts: Verdict[]): Verdict {
  if (verdicts.includes('invalid')) return 'invalid';
  return verdicts.includes('unknown') ? 'unknown' : 'valid';
}

function or(verdicts: Verdict[]): Verdict {
  if (verdicts.includes('valid')) return 'valid';
  return verdicts.includes('unknown') ? 'unknown' : 'invalid';
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  const actual = jsonTypeOf(value);
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return actual === type;
}

function deepEqual(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

function formatVerdict(format: string, value: string): Verdict {
  if (format === 'uuid') return UUID.test(value) ? 'valid' : 'invalid';
  if (format === 'date-time') return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)) ? 'valid' : 'invalid';
  if (format === 'binary') return 'valid';
  return 'unknown';
}

function stringVerdict(schema: JsonSchema, value: string): Verdict {
  const codePoints = [...value].length;
  if (schema.minLength !== undefined && codePoints < schema.minLength) return 'invalid';
  if (schema.maxLength !== undefined && codePoints > schema.maxLength) return 'invalid';
  const verdicts: Verdict[] = [];
  if (schema.pattern !== undefined) verdicts.push(new RegExp(schema.pattern, 'u').test(value) ? 'valid' : 'invalid');
  if (schema.format !== undefined) verdicts.push(formatVerdict(schema.format, value));
  return and(...verdicts);
}

function numberVerdict(schema: JsonSchema, value: number): Verdict {
  if (schema.minimum !== undefined && value < schema.minimum) return 'invalid';
  if (schema.maximum !== undefined && value > schema.maximum) return 'invalid';
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return 'invalid';
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return 'invalid';
  return 'valid';
}

function arrayVerdict(schema: JsonSchema, value: readonly unknown[]): Verdict {
  if (schema.minItems !== undefined && value.length < schema.minItems) return 'invalid';
  if (schema.maxItems !== undefined && value.length > schema.maxItems) return 'invalid';
  const { items } = schema;
  return items === undefined ? 'valid' : and(...value.map((item) => schemaVerdict(items, item)));
}

function objectVerdict(schema: JsonSchema, value: Readonly<Record<string, unknown>>): Verdict {
  const keys = Object.keys(value);
  if (schema.required?.some((key) => !keys.includes(key))) return 'invalid';
  const properties = schema.properties ?? {};
  const verdicts = keys.map((key): Verdict => {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (property !== undefined) return schemaVerdict(property, value[key]);
    const extra = schema.additionalProperties;
    if (extra === false) return 'invalid';
    return extra === undefined || extra === true ? 'valid' : schemaVerdict(extra, value[key]);
  });
  return and(...verdicts);
}

/**
 * Whether `value` (parsed JSON) satisfies `schema`. Never recurses into parts of `value` the
 * schema does not describe, so a body nested thousands of levels deep costs nothing here.
 */
export function schemaVerdict(schema: JsonSchema, value: unknown): Verdict {
  if (UNMODELLED.some((keyword) => keyword in schema)) return 'unknown';
  const verdicts: Verdict[] = [];
  if (schema.type !== undefined) {
    const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!types.some((type) => hasType(value, type) || (type === 'number' && hasType(value, 'integer')))) {
      return 'invalid';
    }
  }
  if (schema.const !== undefined && !deepEqual(schema.const, value)) return 'invalid';
  if (schema.enum !== undefined && !schema.enum.some((member) => deepEqual(member, value))) return 'invalid';
  if (typeof value === 'string') verdicts.push(stringVerdict(schema, value));
  if (typeof value === 'number') verdicts.push(numberVerdict(schema, value));
  if (Array.isArray(value)) verdicts.push(arrayVerdict(schema, value));
  else if (typeof value === 'object' && value !== null) {
    verdicts.push(objectVerdict(schema, value as Record<string, unknown>));
  }
  if (schema.anyOf) verdicts.push(or(schema.anyOf.map((member) => schemaVerdict(member, value))));
  if (schema.allOf) verdicts.push(and(...schema.allOf.map((member) => schemaVerdict(member, value))));
  if (schema.oneOf) {
    const members = schema.oneOf.map((member) => schemaVerdict(member, value));
    const valid = members.filter((verdict) => verdict === 'valid').length;
    verdicts.push(valid > 1 ? 'invalid' : or(members));
  }
  return and(...verdicts);
}

/** Decimal digits with an optional minus: the only way a URL can spell an integer. */
const DECIMAL_INTEGER = /^-?\d+$/;

/** The JSON types a schema allows, looking through `anyOf` / `oneOf`. */
export function allowedTypes(schema: JsonSchema): string[] {
  if (schema.type !== undefined) return typeof schema.type === 'string' ? [schema.type] : [...schema.type];
  const members = schema.anyOf ?? schema.oneOf ?? [];
  return members.flatMap(allowedTypes);
}

/** Reads one URL text value as the type `schema` documents, or `undefined` when it cannot be one. */
function textAsType(schema: JsonSchema, text: string): unknown {
  const types = allowedTypes(schema);
  if (types.length === 0 || types.includes('string')) return text;
  if (types.includes('integer') || types.includes('number')) {
    if (!DECIMAL_INTEGER.test(text)) return undefined;
    const value = BigInt(text);
    // Compare exactly: 9007199254740993 must not round onto an allowed bound.
    if (schema.maximum !== undefined && value > BigInt(Math.floor(schema.maximum))) return Number.POSITIVE_INFINITY;
    if (schema.minimum !== undefined && value < BigInt(Math.ceil(schema.minimum))) return Number.NEGATIVE_INFINITY;
    return Number(value);
  }
  if (types.includes('boolean')) return text === 'true' ? true : text === 'false' ? false : undefined;
  return undefined;
}

/**
 * Verdict on the values a path parameter or query parameter got (several when the query repeats
 * the name). URL values are text: an integer must be written in decimal digits — `0x1`, `1.0`,
 * `1e2`, `Infinity` or ` 1` are wrong types, as the brief for this suite and the server's own
 * "decimal integer" rule have it. Leading zeros (`007`) are left `unknown`: not worth a quarrel.
 */
export function textParamVerdict(schema: JsonSchema, values: readonly string[]): Verdict {
  if (values.some((value) => value.includes('\u0000'))) return 'invalid';
  const types = allowedTypes(schema);
  if (values.length !== 1) return types.includes('array') ? 'unknown' : 'invalid';
  const text = values[0] ?? '';
  if (/^-?0\d/.test(text)) return 'unknown';
  const value = textAsType(schema, text);
  if (value === undefined) return 'invalid';
  if (value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY) return 'invalid';
  return schemaVerdict(schema, value);
}

/** Whether a parsed JSON value holds a NUL in any string or key; iterative, for bodies nested very deep. */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (next.includes('\u0000')) return true;
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (typeof next === 'object' && next !== null) {
      for (const [key, item] of Object.entries(next)) {
        if (key.includes('\u0000')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}
