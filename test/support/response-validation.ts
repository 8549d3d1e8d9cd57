import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { API_PREFIX, ENIGMA_API_PREFIX } from '../../src/http/api-prefix.js';

type Json = Record<string, unknown>;

const DOCUMENT = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
};

/**
 * Issue 22: every answer the integration tests get is checked against the committed OpenAPI
 * document — its status must be documented for the operation, and a JSON body must match the
 * documented schema — so the document cannot drift from what the server sends.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'openapi.json', components: DOCUMENT.components } as Json);

interface Operation {
  readonly pattern: RegExp;
  readonly template: string;
  readonly method: string;
  readonly responses: Record<string, Json>;
}

const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({
    template,
    method: method.toUpperCase(),
    pattern: new RegExp(`^${template.replaceAll(/\{\w+\}/g, '[^/]+')}$`),
    responses: (operation.responses ?? {}) as Record<string, Json>,
  })),
);

const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(key: string, schema: Json) {
  let validate = validators.get(key);
  if (!validate) {
    // Local refs point into the document's components.
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'));
    validate = ajv.compile(rebased);
    validators.set(key, validate);
  }
  return validate;
}

/** The problems of one answer against the document; empty when it conforms (or is not an API answer). */
export function responseViolations(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  body: string,
): string[] {
  const requestPath = url.split('?')[0] ?? url;
  // ENiGMA½'s prefix (restApi.enigmaCompat) answers as baud's does, but is hidden from the
  // document: its answers are checked against their baud twins.
  const pathname = requestPath.startsWith(`${ENIGMA_API_PREFIX}/`)
    ? `${API_PREFIX}${requestPath.slice(ENIGMA_API_PREFIX.length)}`
    : requestPath;
  if (method === 'HEAD' || method === 'OPTIONS') return [];
  const candidates = OPERATIONS.filter((operation) => operation.method === method && operation.pattern.test(pathname));
  // Static segments win, as in the router (/messages/search before /messages/{uuid}).
  const operation = candidates.sort((a, b) => a.template.split('{').length - b.template.split('{').length)[0];
  if (!operation || status === 404 || status === 405) return [];
  const response = operation.responses[String(status)];
  if (!response) return [`${method} ${operation.template} answered ${status}, which the document does not list`];
  const mediaType = (contentType ?? '').split(';')[0]?.trim() ?? '';
  const content = response.content as Record<string, { schema?: Json }> | undefined;
  if (!content || body === '' || !mediaType.endsWith('json')) return [];
  const schema = content[mediaType]?.schema;
  if (!schema) return [`${method} ${operation.template} ${status} sent ${mediaType}, which the document does not list`];
  const validate = validatorFor(`${method} ${operation.template} ${status} ${mediaType}`, schema);
  if (validate(JSON.parse(body))) return [];
  return (validate.errors ?? []).map(
    (error: { instancePath: string; message?: string }) =>
      `${method} ${operation.template} ${status}: ${error.instancePath || '/'} ${error.message}`,
  );
}
