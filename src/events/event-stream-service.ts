import type { Caller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import { BadRequestError, TooManyRequestsError, UnauthorizedError } from '../errors.js';
import { checkEventFilter, commaList, compileEventFilter } from './event-filter.js';
import type { EventHub } from './event-hub.js';
import type { EventLog } from './event-log.js';
import { openEventStream, type StreamSink } from './event-stream.js';
import type { EventVisibility } from './event-visibility.js';
import type { StreamRegistry } from './stream-registry.js';

/** Seconds a client over a stream limit is told to wait. */
const RETRY_AFTER_SECONDS = 10;

/** A client's request to follow the board, as the client sent it. */
export interface StreamRequest {
  readonly caller: Caller;
  /**
   * Who the caller's credential stands for now; throws UnauthorizedError once it no longer
   * stands (expired, ended, revoked). Null for a caller without a credential.
   */
  readonly recheckCaller: (() => Promise<Caller>) | null;
  /** Where the request came from: an anonymous caller's streams are counted per address. */
  readonly clientAddress: string;
  /** Comma-separated event types (`?types=`); absent means all. */
  readonly types: string | undefined;
  /** Comma-separated area globs (`?areas=`); absent means all areas. */
  readonly areas: string | undefined;
  /** `Last-Event-ID`: resume after this event. */
  readonly lastEventId: string | undefined;
}

/** A stream being written to its client. */
export interface OpenedStream {
  /** Ends the stream and gives its place back; a second call changes nothing. */
  close(): void;
}

/** The live event streams of a node (`GET /events`, docs/api-notes.md "Live events"). */
export interface EventStreamService {
  /**
   * Opens a stream of what `request.caller` may see into `sink`, within the per-caller and
   * per-node limits. A bad filter or `Last-Event-ID` → BadRequestError; a full limit (or a
   * closing node) → TooManyRequestsError.
   */
  open(request: StreamRequest, sink: StreamSink): Promise<OpenedStream>;
}

/** `Last-Event-ID` as an event id; anything else is a 400. */
function lastEventIdOf(header: string | undefined): number | null {
  if (header === undefined || header.trim() === '') return null;
  const id = Number(header.trim());
  if (!/^\d+$/.test(header.trim()) || !Number.isSafeInteger(id)) {
    throw new BadRequestError('request.invalid-header', 'Last-Event-ID must be an event id (a non-negative integer).', [
      { pointer: '/headers/last-event-id', message: 'must be a non-negative integer' },
    ]);
  }
  return id;
}

export function createEventStreamService(deps: {
  hub: EventHub;
  streams: StreamRegistry;
  log: EventLog;
  mayCallerSee: EventVisibility;
  clock: Clock;
  settings: Pick<Config['events'], 'heartbeatSeconds' | 'maxStreamsPerUser'>;
}): EventStreamService {
  const { hub, streams, log, mayCallerSee, clock, settings } = deps;

  /** A place for one more stream of `owner`, or the 429 that says which limit is full. */
  function reservePlace(owner: string): () => void {
    const place = streams.reserve(owner);
    if (place === 'owner') {
      throw new TooManyRequestsError(
        'event.too-many-streams',
        `You have ${settings.maxStreamsPerUser} event streams open already: close one first.`,
        RETRY_AFTER_SECONDS,
      );
    }
    if (place === 'node') {
      throw new TooManyRequestsError(
        'event.node-at-capacity',
        'This node follows as many event streams as it can: try again later.',
        RETRY_AFTER_SECONDS,
      );
    }
    return place;
  }

  return {
    async open(request, sink) {
      const filter = checkEventFilter(commaList(request.types), commaList(request.areas), {
        types: '/query/types',
        areas: '/query/areas',
      });
      const lastEventId = lastEventIdOf(request.lastEventId);
      const { caller, recheckCaller } = request;
      const release = reservePlace(
        caller.kind === 'user' ? `user:${caller.user.id}` : `address:${request.clientAddress}`,
      );
      try {
        await hub.start();
      } catch (error) {
        release();
        throw error;
      }
      const stream = await openEventStream(
        { hub, log, mayCallerSee, clock },
        {
          caller,
          recheckCaller:
            recheckCaller === null
              ? null
              : () =>
                  recheckCaller().catch((error: unknown) => {
                    if (error instanceof UnauthorizedError) return null;
                    throw error;
                  }),
          accepts: compileEventFilter(filter),
          lastEventId,
          heartbeatMs: settings.heartbeatSeconds * 1000,
          sink,
        },
      );
      streams.add(stream);
      return {
        close() {
          stream.close();
          streams.remove(stream);
          release();
        },
      };
    },
  };
}
