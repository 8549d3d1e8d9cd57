import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

/**
 * Request validation, one Ajv per kind of request part, because the contract differs:
 * - a JSON body is typed JSON: `{"subject": 42}` is a wrong type (400), never the string "42";
 * - path parameters, query strings and headers are text, so their values are coerced to the
 *   schema's type — but an integer must be written as a canonical decimal (`17`, not `0x11`,
 *   `1.7e1`, `17.0`, ` 17` or `Infinity`, all of which Ajv's coercion would accept), so one
 *   resource has one URL and no exotic number reaches a query.
 */
const COMMON_OPTIONS: Options = {
  // Unknown body fields are errors (PUT /users/me), not silently dropped; every problem is reported.
  removeAdditional: false,
  useDefaults: true,
  allErrors: true,
  // Schemas carrying an `$id` are compiled for many routes; Ajv must not keep (and refuse) them.
  addUsedSchema: false,
  // TypeBox and the OpenAPI document add annotation keywords (examples, …) Ajv does not know.
  strict: false,
};

function createAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...COMMON_OPTIONS, coerceTypes });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = createAjv(false);
const textAjv = createAjv('array');

/** A canonical decimal integer: optional minus, no leading zeros, no exponent, no spaces. */
const CANONICAL_INTEGER = /^-?(?:0|[1-9][0-9]*)$/;

type Schema = Record<string, unknown>;

function isIntegerSchema(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, anyOf } = schema as { type?: unknown; anyOf?: unknown };
  if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) return true;
  return Array.isArray(anyOf) && anyOf.some(isIntegerSchema);
}

/** The top-level properties of an object schema whose values must be integers. */
function integerProperties(schema: Schema): string[] {
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return [];
  return Object.entries(properties)
    .filter(([, property]) => isIntegerSchema(property))
    .map(([name]) => name);
}

function nonCanonicalIntegerError(name: string): ErrorObject {
  return {
    instancePath: `/${name}`,
    schemaPath: `#/properties/${name}/type`,
    keyword: 'type',
    params: { type: 'integer' },
    message: 'must be a decimal integer',
  };
}

function isCanonicalInteger(value: string): boolean {
  return CANONICAL_INTEGER.test(value) && Number.isSafeInteger(Number(value));
}

/** Validates text parts: canonical integers first, then the schema with coercion. */
function compileTextValidator(schema: Schema): ValidateFunction {
  const validate = textAjv.compile(schema);
  const integers = integerProperties(schema);
  if (integers.length === 0) return validate;
  const checked = ((data: unknown) => {
    if (typeof data === 'object' && data !== null) {
      const record = data as Record<string, unknown>;
      for (const name of integers) {
        const raw = record[name];
        const values = Array.isArray(raw) ? raw : [raw];
        if (values.some((value) => typeof value === 'string' && !isCanonicalInteger(value))) {
          checked.errors = [nonCanonicalIntegerError(name)];
          return false;
        }
      }
    }
    const isValid = validate(data);
    checked.errors = validate.errors;
    return isValid;
  }) as ValidateFunction;
  return checked;
}

/** Fastify's validator compiler for every route: bodies strictly typed, text parts coerced. */
export const compileRequestValidator: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return bodyAjv.compile(schema as Schema);
  return compileTextValidator(schema as Schema);
};
