import type { FastifyInstance } from 'fastify';
import { BadRequestError, type FieldError } from '../errors.js';
import { invalidFieldCode } from './problem.js';
import { syncHook } from './sync-hook.js';

const MAX_REPORTED = 10;

const escapePointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Finds NUL characters in a parsed request part; returns a JSON pointer for each (at most 10).
 * Walks with an explicit stack, not recursion: the JSON parser bounds nesting, but a guard that
 * a request body can drive should not depend on that to keep its stack.
 */
function nulPointers(root: unknown, rootPointer: string): FieldError[] {
  const found: FieldError[] = [];
  const pending: [unknown, string][] = [[root, rootPointer]];
  while (pending.length > 0 && found.length < MAX_REPORTED) {
    const [value, pointer] = pending.pop() as [unknown, string];
    if (typeof value === 'string') {
      if (value.includes('\u0000')) found.push({ pointer, message: 'must not contain NUL characters' });
    } else if (typeof value === 'object' && value !== null) {
      const children: [unknown, string][] = [];
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) found.push({ pointer, message: 'must not contain NUL characters' });
        children.push([item, `${pointer}/${escapePointerToken(key)}`]);
      }
      // Reversed onto the stack, so pointers are reported in document order. (A loop, not a
      // spread: an array body of 500,000 items would overflow the arguments of push.)
      for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index] as [unknown, string]);
    }
  }
  return found;
}

/**
 * Refuses NUL characters in path parameters, query strings and JSON bodies with 400.
 * PostgreSQL cannot store NUL in text (and no board text needs one), so without this a NUL
 * would travel to the database and come back as a 500 — on one dialect but not the other.
 * One guard here instead of a check in every service.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook(
    'preValidation',
    syncHook((request) => {
      const found = [
        ...nulPointers(request.params, '/path'),
        ...nulPointers(request.query, '/query'),
        ...nulPointers(request.body, '/body'),
      ].slice(0, MAX_REPORTED);
      const first = found[0];
      if (first)
        throw new BadRequestError(invalidFieldCode(first.pointer), `${first.pointer.slice(1)} ${first.message}`, found);
      return undefined;
    }),
  );
}
