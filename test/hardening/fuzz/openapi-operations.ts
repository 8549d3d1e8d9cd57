import type { JsonSchema } from './schema-verdict.js';

/** A path or query parameter of an operation. */
export interface ParamSpec {
  readonly name: string;
  readonly isRequired: boolean;
  readonly schema: JsonSchema;
}

/** One media type an operation's request body may have. */
export interface BodySpec {
  /** Lower-case, without parameters: `application/json`, `multipart/form-data`. */
  readonly mediaType: string;
  readonly schema: JsonSchema;
}

/** One operation of the OpenAPI document, with every `$ref` in its schemas resolved. */
export interface Operation {
  /** `POST /messages/areas/{areaTag}/messages`: method and path below the API prefix. */
  readonly id: string;
  /** Upper case. */
  readonly method: string;
  /** The full path template, e.g. `/_baud/api/v1/messages/{uuid}`. */
  readonly pathTemplate: string;
  readonly pathParams: readonly ParamSpec[];
  readonly queryParams: readonly ParamSpec[];
  /** Empty when the operation documents no request body. */
  readonly bodies: readonly BodySpec[];
  readonly isBodyRequired: boolean;
  /** Every method the document lists for the same path (upper case). */
  readonly pathMethods: readonly string[];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Follows local `$ref`s (`#/components/schemas/…`) throughout `value`. */
function resolveRefs(value: unknown, document: Json, depth = 0): unknown {
  if (depth > 64) throw new Error('$ref chain too deep (a cycle?) in the OpenAPI document');
  if (Array.isArray(value)) return value.map((item) => resolveRefs(item, document, depth + 1));
  if (!isObject(value)) return value;
  const ref = value.$ref;
  if (typeof ref === 'string') {
    if (!ref.startsWith('#/')) throw new Error(`cannot resolve the non-local $ref ${ref}`);
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, key) => (isObject(node) ? node[key.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined),
        document,
      );
    if (target === undefined) throw new Error(`unresolvable $ref ${ref}`);
    return resolveRefs(target, document, depth + 1);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveRefs(item, document, depth + 1)]));
}

function paramsOf(raw: unknown, location: 'path' | 'query', document: Json): ParamSpec[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .map((param) => resolveRefs(param, document))
    .filter((param): param is Json => isObject(param) && param.in === location && typeof param.name === 'string')
    .map((param) => ({
      name: String(param.name),
      isRequired: param.required === true || location === 'path',
      schema: (isObject(param.schema) ? param.schema : {}) as JsonSchema,
    }));
}

/**
 * Every operation of an OpenAPI 3 document, read at run time so that a new route is fuzzed
 * without touching the suite. Routes the app hides from the document (the docs UI and the
 * document itself) are not in it, and so are not fuzzed.
 */
export function operationsOf(document: unknown, apiPrefix: string): Operation[] {
  if (!isObject(document) || !isObject(document.paths)) throw new Error('not an OpenAPI document');
  const root = document;
  const operations: Operation[] = [];
  for (const [pathTemplate, pathItem] of Object.entries(document.paths)) {
    if (!isObject(pathItem)) continue;
    const pathMethods = HTTP_METHODS.filter((method) => isObject(pathItem[method])).map((method) =>
      method.toUpperCase(),
    );
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const params = [
        ...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []),
        ...(Array.isArray(operation.parameters) ? operation.parameters : []),
      ];
      const requestBody = resolveRefs(operation.requestBody, root);
      const content = isObject(requestBody) && isObject(requestBody.content) ? requestBody.content : {};
      const bodies = Object.entries(content).map(([mediaType, media]) => ({
        mediaType: mediaType.split(';')[0]?.trim().toLowerCase() ?? mediaType,
        schema: (isObject(media) && isObject(media.schema) ? media.schema : {}) as JsonSchema,
      }));
      const shortPath = pathTemplate.startsWith(apiPrefix) ? pathTemplate.slice(apiPrefix.length) : pathTemplate;
      operations.push({
        id: `${method.toUpperCase()} ${shortPath}`,
        method: method.toUpperCase(),
        pathTemplate,
        pathParams: paramsOf(params, 'path', root),
        queryParams: paramsOf(params, 'query', root),
        bodies,
        isBodyRequired: isObject(requestBody) && requestBody.required === true,
        pathMethods,
      });
    }
  }
  return operations;
}
