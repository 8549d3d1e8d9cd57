import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A webhook receiver on 127.0.0.1 that answers each POST with the next status of `script` (then
 * 200); a 3xx comes with `Location` pointing at the cloud metadata address.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const script: number[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.statusCode = script.shift() ?? 200;
      if (response.statusCode >= 300 && response.statusCode < 400)
        response.setHeader('location', 'http://169.254.169.254/');
      response.end('thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    script,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
