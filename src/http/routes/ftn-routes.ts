import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Board } from '../../board.js';
import { ProblemResponses } from '../schemas.js';

const SpoolFiles = Type.Object({
  files: Type.Integer({ description: 'Files waiting.' }),
  bytes: Type.Integer({ description: 'Their bytes.' }),
});

const LastSession = Type.Object({
  at: Type.String({ format: 'date-time', description: 'When it started.' }),
  ok: Type.Boolean(),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed; null when it went well.' }),
  filesIn: Type.Integer(),
  filesOut: Type.Integer(),
  bytesIn: Type.Integer(),
  bytesOut: Type.Integer(),
});

const FtnLinkSummary = Type.Object({
  address: Type.String({ description: '`zone:net/node[.point]`' }),
  role: Type.Union([Type.Literal('hub'), Type.Literal('downlink')]),
  calls: Type.Union([Type.String(), Type.Null()], {
    description: 'Where the hub is called (`host:port`); null for a downlink, which calls the board.',
  }),
  lastSession: Type.Union([LastSession, Type.Null()], {
    description: 'The latest binkp session with the link, called or answered, on any node; null before the first.',
  }),
  inSessionOn: Type.Union([Type.String(), Type.Null()], {
    description: 'The node (`host/pid/id`) whose session with the link runs now; null when none does.',
  }),
  outbound: Type.Object(SpoolFiles.properties, { description: 'Packets waiting for the link.' }),
});

const TossEntry = Type.Object({
  network: Type.String(),
  fileName: Type.String({ description: 'The file tossed (`bundle/packet` for a packet of a bundle).' }),
  tossedAt: Type.String({ format: 'date-time' }),
  outcome: Type.Union([Type.Literal('tossed'), Type.Literal('bad')]),
  imported: Type.Integer({ description: 'Messages imported (echomail and netmail).' }),
  duplicates: Type.Integer({ description: 'Messages refused: their MSGID was seen before.' }),
  skipped: Type.Integer({
    description: 'Messages with nowhere to go (an echo not carried, netmail to nobody here), kept in bad.',
  }),
  detail: Type.String({ description: 'Why the file went to bad; empty when all went in.' }),
});

const FtnNetworkStatus = Type.Object({
  network: Type.String({ description: 'The name under `ftn.networks`.' }),
  address: Type.String({ description: 'The board’s address in the network.' }),
  pollMinutes: Type.Integer({ description: 'How often the hub is called (0: only on demand and when it calls).' }),
  areas: Type.Integer({ description: 'Echomail areas carried.' }),
  links: Type.Array(FtnLinkSummary, { description: 'The hub first, then the downlinks.' }),
  inbound: Type.Object(SpoolFiles.properties, { description: 'Files received and not tossed yet.' }),
  bad: Type.Object(SpoolFiles.properties, { description: 'Files moved aside by the tosser, each with a reason.' }),
  queuedNetmail: Type.Integer({ description: 'Netmail sent and not packed yet.' }),
  lastToss: Type.Union([TossEntry, Type.Null()], { description: 'The newest file tossed or moved to bad.' }),
});

const FtnStatus = Type.Object(
  { networks: Type.Array(FtnNetworkStatus) },
  {
    $id: 'FtnStatus',
    examples: [
      {
        networks: [
          {
            network: 'fsxnet',
            address: '21:1/999',
            pollMinutes: 15,
            areas: 2,
            links: [
              {
                address: '21:1/100',
                role: 'hub',
                calls: 'hub.example.org:24554',
                lastSession: {
                  at: '2026-11-24T15:50:58.120Z',
                  ok: true,
                  error: null,
                  filesIn: 1,
                  filesOut: 1,
                  bytesIn: 5120,
                  bytesOut: 1480,
                },
                inSessionOn: null,
                outbound: { files: 1, bytes: 1480 },
              },
            ],
            inbound: { files: 0, bytes: 0 },
            bad: { files: 1, bytes: 812 },
            queuedNetmail: 0,
            lastToss: {
              network: 'fsxnet',
              fileName: '5e1d77a0.pkt',
              tossedAt: '2026-11-24T15:51:03.763Z',
              outcome: 'tossed',
              imported: 12,
              duplicates: 1,
              skipped: 0,
              detail: '',
            },
          },
        ],
      },
    ],
  },
);

/** The board's FTN networks as its sysop watches them (docs/operator-guide.md "Joining a network"). */
export function registerFtnRoutes(fastify: FastifyInstance, board: Board): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/admin/ftn',
    {
      schema: {
        tags: ['admin'],
        summary: "The board's FTN networks",
        description:
          'Per network: its address, its links with their latest session and what waits in their outbounds, the ' +
          'inbound, the files moved to bad, queued netmail and the last toss — what `baud ftn status` prints. ' +
          'Sysops only (others 403).',
        response: { 200: FtnStatus, ...ProblemResponses(401, 403) },
      },
    },
    (request) => board.ftn.statusFor(request.caller),
  );
}
