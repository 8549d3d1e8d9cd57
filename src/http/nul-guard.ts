import type { FastifyInstance } from 'fastify';
import { BadRequestError, type FieldError } from '../errors.js';

/** Finds NUL characters in a parsed request part; returns a JSON pointer for each. */
function nulPointers(value: unknown, pointer: string, found: FieldError[]): void {
  if (found.length >= 10) return;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push({ pointer, message: 'must not contain NUL characters' });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      nulPointers(item, `${pointer}/${index}`, found);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) found.push({ pointer, message: 'must not contain NUL characters' });
      nulPointers(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, found);
    }
  }
}

/**
 * Refuses NUL characters in path parameters, query strings and JSON bodies with 400.
 * PostgreSQL cannot store NUL in text (and no board text needs one), so without this a NUL
 * would travel to the database and come back as a 500 — on one dialect but not the other.
 * One guard here instead of a check in every service.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const found: FieldError[] = [];
    nulPointers(request.params, '/path', found);
    nulPointers(request.query, '/query', found);
    nulPointers(request.body, '/body', found);
    const first = found[0];
    if (first) throw new BadRequestError(`${first.pointer.slice(1)} ${first.message}`, found);
  });
}
