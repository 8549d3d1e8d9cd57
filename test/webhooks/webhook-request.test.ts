import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook, type WebhookPost } from '../../src/webhooks/webhook-request.js';
import type { WebhookAddress } from '../../src/webhooks/webhook-target.js';

// A self-signed certificate for hooks.example.test, valid until 2126, made once with
// `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 36500
//  -subj /CN=hooks.example.test -addext subjectAltName=DNS:hooks.example.test`.
const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBsTCCAVagAwIBAgIUcViPC0GlzQ26xHyJVujGsHN42cswCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSaG9va3MuZXhhbXBsZS50ZXN0MCAXDTI2MTEyNDE2Mzk1MFoY
DzIxMjYxMDMxMTYzOTUwWjAdMRswGQYDVQQDDBJob29rcy5leGFtcGxlLnRlc3Qw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARhIio8LoE1ABW6G1R1VJF8npL535VR
LWsei+V3IMVqNb1zBGtFouKMiDPIH7SAYUjNt1ViciRM8xr841ZYRwHGo3IwcDAd
BgNVHQ4EFgQUCr02p+2NvTr6R+oN4sm+zjTDkwcwHwYDVR0jBBgwFoAUCr02p+2N
vTr6R+oN4sm+zjTDkwcwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHREEFjAUghJob29r
cy5leGFtcGxlLnRlc3QwCgYIKoZIzj0EAwIDSQAwRgIhAORWbO5z3PO5iZz17FmF
hnaZKG4tKYlVsvlhevN40TdJAiEAwKnuOqNimh6hk3YGXMy0apRyUcq1/39qFtEe
Afm/2Jw=
-----END CERTIFICATE-----
`;
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgioxfdIj7I1CIKPHN
JugiAjlfOHMnJRLuvmDYhS0aeMWhRANCAARhIio8LoE1ABW6G1R1VJF8npL535VR
LWsei+V3IMVqNb1zBGtFouKMiDPIH7SAYUjNt1ViciRM8xr841ZYRwHG
-----END PRIVATE KEY-----
`;

const BODY = '{"event":"message.posted","data":{"areaTag":"general","subject":"Modem à vendre"}}';
const HEADERS = {
  'Content-Type': 'application/json',
  'User-Agent': 'baud/0.1.0',
  'X-Baud-Event': 'message.posted',
  'X-Baud-Delivery': '0b7d6c1e-5f3a-4c2b-9a1d-2e8f7c6b5a49',
  'X-Baud-Signature': 't=1700000000,v1=2f441ba4b3b2d50d28a9ab9d9fd8880376ecd1eb5d0435401553f5d8d0a5dcf8',
};

interface ReceivedRequest {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface TestReceiver {
  readonly port: number;
  readonly received: ReceivedRequest[];
}

const openServers: (http.Server | https.Server)[] = [];

afterEach(async () => {
  for (const server of openServers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: http.Server | https.Server): Promise<number> {
  openServers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A receiver on 127.0.0.1 that records each request, body included, before `answer` replies. */
async function startReceiver(answer: (response: http.ServerResponse) => void): Promise<TestReceiver> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { method, url, headers } = request;
      received.push({ method, url, headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(response);
    });
  });
  return { port: await listen(server), received };
}

const post = (overrides: Partial<WebhookPost> & Pick<WebhookPost, 'url'>) =>
  postWebhook({ body: BODY, headers: HEADERS, allowPrivateTargets: true, timeoutMs: 5000, ...overrides });

/** A fake DNS that answers `address` for every name, and the names it was asked for. */
function lookupTo(address: string) {
  const hostnames: string[] = [];
  const lookup = async (hostname: string): Promise<WebhookAddress[]> => {
    hostnames.push(hostname);
    return [{ address, family: 4 }];
  };
  return { lookup, hostnames };
}

describe('postWebhook', () => {
  it('POSTs the body and headers, with Content-Length, and succeeds on a 2xx', async () => {
    const receiver = await startReceiver((response) => response.writeHead(204).end());
    const attempt = await post({ url: `http://127.0.0.1:${receiver.port}/hooks/baud?x=1` });

    expect(attempt).toEqual({ statusCode: 204, durationMs: expect.any(Number), error: null, isSuccess: true });
    expect(attempt.durationMs).toBeGreaterThan(0);
    expect(receiver.received).toEqual([
      {
        method: 'POST',
        url: '/hooks/baud?x=1',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'baud/0.1.0',
          'x-baud-event': 'message.posted',
          'x-baud-delivery': '0b7d6c1e-5f3a-4c2b-9a1d-2e8f7c6b5a49',
          'x-baud-signature': HEADERS['X-Baud-Signature'],
          'content-length': String(Buffer.byteLength(BODY)),
          host: `127.0.0.1:${receiver.port}`,
          connection: 'close',
        },
        body: BODY,
      },
    ]);
  });

  it('fails on a 500 with "answered 500"', async () => {
    const receiver = await startReceiver((response) => response.writeHead(500).end('oops'));
    const attempt = await post({ url: `http://127.0.0.1:${receiver.port}/` });
    expect(attempt).toMatchObject({ statusCode: 500, error: 'answered 500', isSuccess: false });
  });

  it('fails on a redirect without following it', async () => {
    const target = await startReceiver((response) => response.writeHead(200).end());
    const receiver = await startReceiver((response) =>
      response.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end(),
    );
    const attempt = await post({ url: `http://127.0.0.1:${receiver.port}/` });
    expect(attempt).toMatchObject({ statusCode: 302, error: 'answered 302', isSuccess: false });
    expect(receiver.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('gives up on a receiver that never answers when the deadline passes', async () => {
    const receiver = await startReceiver(() => {});
    const attempt = await post({ url: `http://127.0.0.1:${receiver.port}/`, timeoutMs: 300 });
    expect(attempt).toMatchObject({ statusCode: null, error: 'timed out after 0.3 s', isSuccess: false });
    expect(attempt.durationMs).toBeGreaterThanOrEqual(290);
    expect(attempt.durationMs).toBeLessThan(1000);
    expect(receiver.received).toHaveLength(1);
  });

  it('counts a DNS lookup that hangs against the deadline', async () => {
    const attempt = await post({
      url: 'http://hooks.example.test/',
      timeoutMs: 300,
      lookup: () => new Promise<WebhookAddress[]>(() => {}),
    });
    expect(attempt).toMatchObject({ statusCode: null, error: 'timed out after 0.3 s', isSuccess: false });
    expect(attempt.durationMs).toBeLessThan(1000);
  });

  it('reads no more than 64 KiB of a 10 MiB answer, then hangs up', async () => {
    const announcedBytes = 10 * 1024 * 1024;
    const chunk = Buffer.alloc(16 * 1024, 'x');
    let writtenBytes = 0;
    let markClosed = (_bytes: number): void => {};
    const closed = new Promise<number>((resolve) => {
      markClosed = resolve;
    });
    // 16 KiB every 20 ms: sending all 10 MiB would take 13 s.
    const receiver = await startReceiver((response) => {
      response.writeHead(200, { 'content-length': String(announcedBytes) });
      const writer = setInterval(() => {
        response.write(chunk);
        writtenBytes += chunk.length;
      }, 20);
      response.on('close', () => {
        clearInterval(writer);
        markClosed(writtenBytes);
      });
    });

    const attempt = await post({ url: `http://127.0.0.1:${receiver.port}/` });
    expect(attempt).toMatchObject({ statusCode: 200, error: null, isSuccess: true });
    expect(attempt.durationMs).toBeLessThan(2000);
    expect(await closed).toBeLessThan(256 * 1024);
  });

  it('reports a refused connection by its code', async () => {
    const server = http.createServer();
    const port = await listen(server);
    await new Promise((resolve) => server.close(resolve));

    const attempt = await post({ url: `http://127.0.0.1:${port}/` });
    expect(attempt).toMatchObject({ statusCode: null, error: 'ECONNREFUSED', isSuccess: false });
  });

  it('refuses a loopback receiver unless private targets are allowed, without connecting', async () => {
    const receiver = await startReceiver((response) => response.writeHead(200).end());
    const attempt = await post({ url: `http://127.0.0.1:${receiver.port}/`, allowPrivateTargets: false });
    expect(attempt).toMatchObject({
      statusCode: null,
      error: 'not an allowed target',
      isSuccess: false,
    });
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the vetted address of a host name and keeps the name in the Host header', async () => {
    const receiver = await startReceiver((response) => response.writeHead(200).end());
    const url = `http://hooks.example.test:${receiver.port}/in`;

    // hooks.example.test has no address in real DNS: the request can only have used the fake's.
    const dns = lookupTo('127.0.0.1');
    const allowed = await post({ url, lookup: dns.lookup });
    expect(allowed).toMatchObject({ statusCode: 200, error: null, isSuccess: true });
    expect(dns.hostnames).toEqual(['hooks.example.test']);
    expect(receiver.received.map((request) => request.headers.host)).toEqual([`hooks.example.test:${receiver.port}`]);

    const refused = await post({ url, lookup: dns.lookup, allowPrivateTargets: false });
    expect(refused).toMatchObject({ error: 'not an allowed target', isSuccess: false });
    expect(receiver.received).toHaveLength(1);
  });

  it('sends the host name as the TLS server name and checks the certificate', async () => {
    const serverNames: string[] = [];
    const server = https.createServer({
      cert: SELF_SIGNED_CERT,
      key: SELF_SIGNED_KEY,
      SNICallback: (serverName, callback) => {
        serverNames.push(serverName);
        callback(null, undefined);
      },
    });
    server.on('request', (_request, response) => response.writeHead(200).end());
    const port = await listen(server);

    const attempt = await post({ url: `https://hooks.example.test:${port}/`, lookup: lookupTo('127.0.0.1').lookup });
    expect(attempt).toMatchObject({ statusCode: null, error: 'DEPTH_ZERO_SELF_SIGNED_CERT', isSuccess: false });
    expect(serverNames).toEqual(['hooks.example.test']);
  });

  it.each([
    ['an ftp URL', 'ftp://hooks.example.test/', 'https or http only'],
    ['a relative URL', '/hooks', 'not an absolute URL'],
    ['credentials in the URL', 'http://user:pw@127.0.0.1/', 'has a user name or password'],
  ])('fails without throwing on %s', async (_case, url, error) => {
    await expect(post({ url })).resolves.toMatchObject({ statusCode: null, error, isSuccess: false });
  });
});
