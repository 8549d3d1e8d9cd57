import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import type { StreamObserver } from '../events/stream-registry.js';
import type { FtnObserver } from '../ftn/ftn-observer.js';
import type { SystemService } from '../system/system-service.js';
import type { AttemptObserver } from '../webhooks/webhook-sender.js';

/** What a monitoring system scrapes from one node, in Prometheus' text format. */
export interface BoardMetrics {
  readonly registry: Registry;
  /**
   * One answered request. `route` is the route's pattern (`/_baud/api/v1/messages/:uuid`), never
   * the URL: ids in URLs would make a new series per message.
   */
  observeRequest(request: ObservedRequest): void;
  /** Event streams opening and closing on this node. */
  readonly eventStreams: StreamObserver;
  /** Webhook delivery attempts sent by this node. */
  readonly webhookAttempts: AttemptObserver;
  /** binkp sessions, packets and messages tossed and exported, bytes moved by this node. */
  readonly ftn: FtnObserver;
}

export interface ObservedRequest {
  readonly method: string;
  /** The route pattern, or null when no route matched (404s of unknown paths). */
  readonly route: string | null;
  readonly status: number;
  readonly seconds: number;
  /** The request's Content-Length, when it sent one. */
  readonly requestBytes: number | null;
}

/** Routes whose answers also feed the login and upload counters (one pattern per API prefix). */
export interface CountedRoutes {
  readonly login: readonly string[];
  readonly upload: readonly string[];
}

/** Seconds: from a cached page (~1 ms) to a slow upload. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Seconds: a cached SQLite statement (~20 µs) to a statement timeout (30 s). */
const QUERY_LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30];

/**
 * The board's metrics in a registry of its own (not prom-client's global one, so several boards
 * in one process — tests — never share series): requests by route, method and status with their
 * latency, logins refused and throttled, uploads and their bytes, live sessions, the database
 * pool and query latency, and Node's process metrics. Gauges are read when scraped, so they
 * cost nothing between scrapes.
 */
export function createBoardMetrics(deps: {
  database: Pick<Database, 'poolState' | 'onQuery'>;
  system: Pick<SystemService, 'getInfo'>;
  routes: CountedRoutes;
}): BoardMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'baud_http_requests_total',
    help: 'Answered HTTP requests by method, route pattern and status.',
    labelNames,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'baud_http_request_duration_seconds',
    help: 'Time from a request’s arrival to the end of its answer.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const loginFailures = new Counter({
    name: 'baud_login_failures_total',
    help: 'Logins refused for a wrong username or password (401).',
    registers: [registry],
  });
  const loginsThrottled = new Counter({
    name: 'baud_login_throttled_total',
    help: 'Logins refused by the login throttle (429).',
    registers: [registry],
  });
  const uploads = new Counter({
    name: 'baud_uploads_total',
    help: 'Files stored through the API (201).',
    registers: [registry],
  });
  const uploadBytes = new Counter({
    name: 'baud_upload_request_bytes_total',
    help: 'Request bytes of stored uploads (the multipart body, file included).',
    registers: [registry],
  });
  new Gauge({
    name: 'baud_live_sessions',
    help: 'Login sessions active in the last minutes on the whole board (nodeCount).',
    registers: [registry],
    async collect() {
      this.set((await deps.system.getInfo()).nodeCount);
    },
  });
  const poolGauge = (
    name: string,
    help: string,
    read: (state: NonNullable<ReturnType<Database['poolState']>>) => number,
  ) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const state = deps.database.poolState();
        if (state) this.set(read(state));
      },
    });
  poolGauge('baud_db_pool_connections', 'Open PostgreSQL connections of this node.', (state) => state.open);
  poolGauge('baud_db_pool_idle_connections', 'Idle PostgreSQL connections of this node.', (state) => state.idle);
  poolGauge('baud_db_pool_waiting_queries', 'Queries waiting for a PostgreSQL connection.', (state) => state.waiting);
  const queryLatency = new Histogram({
    name: 'baud_db_query_duration_seconds',
    help: 'Time the database took to answer a query (on a connection already held), by statement and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: QUERY_LATENCY_BUCKETS,
    registers: [registry],
  });
  deps.database.onQuery(({ operation, seconds, failed }) =>
    queryLatency.observe({ operation, outcome: failed ? 'error' : 'ok' }, seconds),
  );

  const openStreams = new Gauge({
    name: 'baud_event_streams',
    help: 'Event streams (GET /events) open on this node.',
    registers: [registry],
  });

  const webhookAttempts = new Counter({
    name: 'baud_webhook_attempts_total',
    help: 'Webhook delivery attempts sent by this node, by outcome (success: a 2xx in time).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  const ftnSessions = new Counter({
    name: 'baud_ftn_sessions_total',
    help: 'binkp sessions this node held (called or answered), by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const ftnPackets = new Counter({
    name: 'baud_ftn_packets_total',
    help: 'FTN packets this node tossed (in), wrote for a link (out) or moved to bad.',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  const ftnMessages = new Counter({
    name: 'baud_ftn_messages_total',
    help: 'FTN messages this node imported, refused as duplicates, kept in bad (skipped) or exported.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const ftnBytes = new Counter({
    name: 'baud_ftn_bytes_total',
    help: 'Bytes of files binkp received (in) and sent (out) on this node.',
    labelNames: ['direction'] as const,
    registers: [registry],
  });

  return {
    registry,
    webhookAttempts: (outcome) => webhookAttempts.inc({ outcome }),
    ftn: {
      session: (outcome) => ftnSessions.inc({ outcome }),
      packets: (direction, count) => ftnPackets.inc({ direction }, count),
      messages: (outcome, count) => ftnMessages.inc({ outcome }, count),
      bytes: (direction, count) => ftnBytes.inc({ direction }, count),
    },
    eventStreams: { opened: () => openStreams.inc(), closed: () => openStreams.dec() },
    observeRequest({ method, route, status, seconds, requestBytes }) {
      const labels = { method, route: route ?? 'unmatched', status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
      if (route === null) return;
      if (deps.routes.login.includes(route)) {
        if (status === 401) loginFailures.inc();
        else if (status === 429) loginsThrottled.inc();
      } else if (deps.routes.upload.includes(route) && method === 'POST' && status === 201) {
        uploads.inc();
        if (requestBytes !== null) uploadBytes.inc(requestBytes);
      }
    },
  };
}

/** A running metrics listener. */
export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` on its own address and port — by default loopback, never the public
 * listener — so only what runs beside the node (or a scraper the sysop lets in) reads it.
 */
export async function listenForMetrics(
  metrics: BoardMetrics,
  options: { readonly address: string; readonly port: number },
): Promise<MetricsListener> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is here.\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${String(error)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.address.includes(':') ? `[${options.address}]` : options.address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
