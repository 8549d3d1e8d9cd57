import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromObject } from '../../src/config/load-config.js';
import { type RunningBoard, serveBoard } from '../../src/setup/serve-board.js';

function get(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('a real listening server', () => {
  let dir: string;
  let running: RunningBoard;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-listen-'));
    const config = configFromObject({
      paths: { dataDir: dir },
      logging: { level: 'silent' },
      general: { boardName: 'Listening Board' },
      contentServers: { web: { port: 0 } },
    });
    running = await serveBoard(config);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the API over HTTP on the configured address', async () => {
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_baud\/api\/v1$/);
    const response = await get(`${running.url}/system/info`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(response.body)).toMatchObject({ boardName: 'Listening Board' });
  });

  it('answers unknown paths with problem+json over the wire', async () => {
    const response = await get(`${running.url}/nope`);
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it('stops gracefully: the port closes and the database is released', async () => {
    const url = running.url;
    await running.stop();
    await expect(get(`${url}/system/info`)).rejects.toThrow(/ECONNREFUSED/);
  });
});
