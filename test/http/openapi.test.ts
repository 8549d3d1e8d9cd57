import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApiDocument } from '../../src/cli/board-commands.js';
import { createTestBoard, type TestBoard } from '../support/test-board.js';

/** Every method + path of api-spec.md section 4, in OpenAPI path syntax. */
const SPEC_ENDPOINTS = [
  'POST /auth/login',
  'POST /auth/refresh',
  'POST /auth/logout',
  'GET /system/info',
  'GET /system/nodes',
  'GET /system/last-callers',
  'GET /system/stats',
  'GET /messages/conferences',
  'GET /messages/conferences/{confTag}',
  'GET /messages/areas/{areaTag}',
  'GET /messages/areas/{areaTag}/messages',
  'POST /messages/areas/{areaTag}/messages',
  'GET /messages/{uuid}',
  'DELETE /messages/{uuid}',
  'GET /files/areas',
  'GET /files/areas/{areaTag}',
  'GET /files/areas/{areaTag}/files',
  'POST /files/areas/{areaTag}',
  'GET /files/{fileId}',
  'GET /files/{fileId}/download',
  'GET /users/me',
  'PUT /users/me',
  'GET /users/{username}',
] as const;

/** Every method + path of beyond-v1.md built so far, in OpenAPI path syntax. */
const BEYOND_V1_ENDPOINTS = [
  'PUT /messages/areas/{areaTag}/pointer',
  'GET /messages/unread',
  'GET /messages/{uuid}/thread',
  'GET /messages/search',
  'GET /files/search',
  'GET /events',
  'POST /webhooks',
  'GET /webhooks',
  'GET /webhooks/{id}',
  'PATCH /webhooks/{id}',
  'DELETE /webhooks/{id}',
  'POST /webhooks/{id}/test',
  'GET /webhooks/{id}/deliveries',
] as const;

/** Every method + path of community.md built so far. */
const COMMUNITY_ENDPOINTS = [
  'POST /auth/register',
  'GET /admin/users',
  'POST /admin/users/{username}/approve',
  'POST /admin/users/{username}/reject',
  'POST /admin/users/{username}/lock',
  'POST /admin/users/{username}/unlock',
  'PUT /admin/users/{username}/groups',
  'GET /admin/audit',
  'PUT /users/me/password',
  'GET /users/me/sessions',
  'DELETE /users/me/sessions/{sessionId}',
  'POST /users/me/totp',
  'POST /users/me/totp/confirm',
  'DELETE /users/me/totp',
  'DELETE /admin/users/{username}/totp',
  'POST /mail',
  'GET /mail',
  'GET /mail/search',
  'GET /mail/{uuid}',
  'PATCH /mail/{uuid}',
  'DELETE /mail/{uuid}',
  'GET /users/me/blocked',
  'PUT /users/me/blocked/{username}',
  'DELETE /users/me/blocked/{username}',
  'POST /users/me/ssh-keys',
  'GET /users/me/ssh-keys',
  'DELETE /users/me/ssh-keys/{id}',
  // The operator's view of the FTN networks ("Networks": what `baud ftn status` shows).
  'GET /admin/ftn',
] as const;

const PREFIX = '/_baud/api/v1';

type OpenApiDocument = { paths: Record<string, Record<string, unknown>> };
interface OpenApiOperation {
  responses: Record<string, { headers?: object; content?: Record<string, { schema: object }> }>;
}

function documentedEndpoints(document: OpenApiDocument): Set<string> {
  const endpoints = new Set<string>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) {
      endpoints.add(`${method.toUpperCase()} ${path.slice(PREFIX.length)}`);
    }
  }
  return endpoints;
}

describe('OpenAPI document', () => {
  let generated: string;
  let board: TestBoard;
  beforeAll(async () => {
    generated = await generateOpenApiDocument();
    board = await createTestBoard('sqlite');
  });
  afterAll(() => board.close());

  it('is committed as docs/openapi.json exactly as generated (run `npm run openapi` after changing routes)', () => {
    const committed = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');
    expect(JSON.parse(committed)).toEqual(JSON.parse(generated));
  });

  it('is served at /_baud/api/v1/openapi.json and declares OpenAPI 3.1', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${PREFIX}/openapi.json` });
    expect(response.statusCode).toBe(200);
    const served = response.json();
    expect(served.openapi).toBe('3.1.0');
    expect(served).toEqual(JSON.parse(generated));
  });

  it('has a browsable docs page', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${PREFIX}/docs/` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
  });

  it('documents all 23 endpoints of the spec (section 4)', () => {
    const documented = documentedEndpoints(JSON.parse(generated));
    const missing = SPEC_ENDPOINTS.filter((endpoint) => !documented.has(endpoint));
    expect(missing).toEqual([]);
  });

  it('documents the endpoints of the spec, beyond-v1.md and community.md, and nothing else', () => {
    const documented = documentedEndpoints(JSON.parse(generated));
    expect([...documented].sort()).toEqual([...SPEC_ENDPOINTS, ...BEYOND_V1_ENDPOINTS, ...COMMUNITY_ENDPOINTS].sort());
  });

  it('documents the RateLimit headers on the login answers that carry them: 200, 401, 403 and 429', () => {
    const login = JSON.parse(generated).paths[`${PREFIX}/auth/login`].post as OpenApiOperation;
    const rateLimitHeaders = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];
    const carrying = Object.entries(login.responses)
      .filter(([, response]) => rateLimitHeaders.every((header) => header in (response.headers ?? {})))
      .map(([status]) => status);
    expect(carrying).toEqual(['200', '401', '403', '429']);
  });

  it('gives every named schema and every JSON success answer an example', () => {
    const document = JSON.parse(generated) as OpenApiDocument & { components: { schemas: Record<string, object> } };
    const withoutExample = Object.entries(document.components.schemas)
      .filter(([, schema]) => !('examples' in schema))
      .map(([name]) => `components/schemas/${name}`);
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations as Record<string, OpenApiOperation>)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const json = response.content?.['application/json'];
          if (!status.startsWith('2') || json === undefined) continue;
          if (!('example' in json || 'examples' in json || 'examples' in json.schema)) {
            withoutExample.push(`${method.toUpperCase()} ${path} ${status}`);
          }
        }
      }
    }
    expect(withoutExample).toEqual([]);
  });

  it('documents an endpoint exactly when the app registers it', () => {
    const documented = documentedEndpoints(JSON.parse(generated));
    for (const endpoint of [...SPEC_ENDPOINTS, ...BEYOND_V1_ENDPOINTS]) {
      const [method, path] = endpoint.split(' ') as [string, string];
      const url = `${PREFIX}${path.replaceAll(/\{(\w+)\}/g, ':$1')}`;
      expect(board.app.hasRoute({ method, url }), `${endpoint} registered`).toBe(documented.has(endpoint));
    }
  });
});
