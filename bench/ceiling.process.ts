/**
 * The ceiling (forked by `startCeilingServer`): a bare `node:http` server in its own process
 * that answers every request with the bytes it was last told to serve — a recorded baud
 * answer (same status, headers and body), or a file streamed with `fs.createReadStream`. What
 * it reaches on this machine, in this run, is what every baud figure is divided by.
 */
import { createReadStream } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import type { CeilingReply, CeilingRequest, CeilingResponse } from './ceiling.js';

let current: { status: number; rawHeaders: string[]; body: Buffer } | { file: string; size: number } = {
  status: 503,
  rawHeaders: [],
  body: Buffer.alloc(0),
};

function answer(response: http.ServerResponse): void {
  const serving = current;
  if ('file' in serving) {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(serving.size) });
    pipeline(createReadStream(serving.file), response).catch(() => response.destroy());
  } else {
    response.writeHead(serving.status, serving.rawHeaders);
    response.end(serving.body);
  }
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' || request.method === 'HEAD') return answer(response);
  // A body is read to its end before the answer, as any server that uses it must.
  request.resume();
  request.once('end', () => answer(response));
});

function serve(response: CeilingResponse): void {
  current =
    response.kind === 'file'
      ? { file: response.file, size: response.size }
      : {
          status: response.status,
          rawHeaders: [...response.rawHeaders],
          body: Buffer.from(response.bodyBase64, 'base64'),
        };
}

function send(reply: CeilingReply): void {
  process.send?.(reply);
}

process.on('message', (message: CeilingRequest) => {
  serve(message.response);
  send({ type: 'serving' });
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server.address() as AddressInfo).port }));
