import fc from 'fast-check';
import { bodyArbitrary, bodyViolation } from './body-arbitrary.js';
import { FuzzCase } from './fuzz-case.js';
import type { FuzzPools } from './fuzz-pools.js';
import { headerArbitrary } from './header-arbitrary.js';
import type { Operation } from './openapi-operations.js';
import { pathArbitrary, queryArbitrary } from './url-arbitrary.js';

/**
 * Which part of the request is generated against the operation (the others stay valid), so a
 * failure says which part caused it; `everything` makes every part hostile at once, and may
 * also use a method the path does not have.
 */
export type Focus = 'path' | 'query' | 'headers' | 'body' | 'everything';

/**
 * The focuses worth fuzzing for an operation (`path` only when it has path parameters), each
 * with its share of the operation's runs: the body counts double where one is documented and
 * half where none is (a stray body is still worth a few tries).
 */
export function focusesOf(operation: Operation): { readonly focus: Focus; readonly share: number }[] {
  const weights: [Focus, number][] = [
    ...(operation.pathParams.length > 0 ? [['path', 1] as [Focus, number]] : []),
    ['query', 1],
    ['headers', 1],
    ['body', operation.bodies.length > 0 ? 2 : 0.5],
    ['everything', 1],
  ];
  const total = weights.reduce((sum, [, weight]) => sum + weight, 0);
  return weights.map(([focus, weight]) => ({ focus, share: weight / total }));
}

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;

function methodArbitrary(operation: Operation, isHostile: boolean): fc.Arbitrary<string> {
  // HEAD is answered for every GET route without being documented: never "another method".
  const others = METHODS.filter((method) => !operation.pathMethods.includes(method));
  if (!isHostile || others.length === 0) return fc.constant(operation.method);
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(operation.method) },
    { weight: 1, arbitrary: fc.constantFrom(...others) },
  );
}

/** Requests for `operation`, hostile in the part `focus` names. */
export function requestArbitrary(operation: Operation, focus: Focus, pools: FuzzPools): fc.Arbitrary<FuzzCase> {
  const isHostile = (part: Focus) => focus === part || focus === 'everything';
  return fc
    .tuple(
      pathArbitrary(operation, pools, isHostile('path')),
      queryArbitrary(operation, pools, isHostile('query')),
      headerArbitrary(pools, isHostile('headers')),
      bodyArbitrary(operation, pools, isHostile('body')),
      methodArbitrary(operation, focus === 'everything'),
    )
    .map(([path, query, who, body, method]) => {
      const headers: Record<string, string> = { ...who.headers };
      if (body.contentType !== undefined && headers['content-type'] === undefined) {
        headers['content-type'] = body.contentType;
      }
      const violation =
        (method === operation.method ? null : `${method} is not an operation of this path`) ??
        path.violation ??
        query.violation ??
        bodyViolation(operation, body, headers['content-type']);
      return new FuzzCase(
        method,
        `${path.text}${query.text}`,
        headers,
        body.payload,
        who.identity,
        who.isAuthenticated,
        violation,
        [path.label, query.label, who.label, body.label],
      );
    });
}
