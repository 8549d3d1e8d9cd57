import type { Dialect } from '../../src/db/database.js';
import { importMessages } from '../../src/messages/message-import.js';
import { createTestBoard, type fakeClock, type TestBoard } from '../support/test-board.js';

export const API = '/_baud/api/v1';
export const ESC = '\u001b';

/**
 * Conferences for the message tests: one public area (allowlisted for anonymous callers), a
 * members-only area, an area nobody passes the ACS of, a write-protected area, the two kinds of
 * blocked area, a members-only conference and a conference nobody may read.
 */
export const MESSAGE_TEST_CONFIG = {
  messageConferences: {
    main: {
      name: 'Main',
      desc: `${ESC}[1;31mMain${ESC}[0m |03conference`,
      areas: {
        general: { name: 'General', desc: `${ESC}[1;31mGeneral${ESC}[0m |03chat` },
        members: { name: 'Members' },
        secret: { name: 'Secret', acs: { read: 'GM[nobody]', write: 'GM[nobody]' } },
        readonly: { name: 'Read only', acs: { write: 'GM[sysops]' } },
        private_mail: { name: 'Private mail' },
        activitypub_shared: { name: 'ActivityPub' },
      },
    },
    other: { name: 'Other', areas: { chatter: { name: 'Chatter' } } },
    hidden: { name: 'Hidden', acs: { read: 'GM[nobody]' }, areas: { vault: { name: 'Vault' } } },
  },
  contentServers: {
    web: { restApi: { messages: { publicAccess: { main: { include: ['general'], exclude: [] } } } } },
  },
};

export interface MessageTestBoard extends TestBoard {
  readonly alice: { userId: number; auth: { authorization: string } };
  readonly bob: { userId: number; auth: { authorization: string } };
  readonly sysop: { userId: number; auth: { authorization: string } };
}

export async function createMessageTestBoard(
  dialect: Dialect,
  clock?: ReturnType<typeof fakeClock>,
): Promise<MessageTestBoard> {
  const board = await createTestBoard(dialect, { config: MESSAGE_TEST_CONFIG, ...(clock ? { clock } : {}) });
  const alice = await board.userWithToken('alice');
  const bob = await board.userWithToken('bob');
  const sysop = await board.userWithToken('sysop', { groups: ['sysops'] });
  return Object.assign(board, { alice, bob, sysop });
}

export interface SeedLine {
  from?: string;
  to?: string;
  subject?: string;
  body?: string;
  timestamp?: string;
  replyTo?: number;
  ftn?: Record<string, unknown>;
}

export async function* linesOf(texts: readonly string[]): AsyncIterable<string> {
  for (const text of texts) yield text;
}

/** Imports `count` messages (or the given lines) into an area through the import service. */
export async function seedMessages(
  board: TestBoard,
  areaTag: string,
  messages: number | readonly SeedLine[],
): Promise<number> {
  const list =
    typeof messages === 'number'
      ? Array.from({ length: messages }, (_, index) => ({ subject: `Seed ${index + 1}` }))
      : messages;
  const lines = list.map((message, index) =>
    JSON.stringify({
      from: 'Seeder',
      subject: `Seed ${index + 1}`,
      body: `Body ${index + 1}`,
      timestamp: new Date(Date.UTC(2020, 0, 1) + index * 1000).toISOString(),
      ...message,
    }),
  );
  const { imported } = await importMessages(board.board, areaTag, linesOf(lines));
  return imported;
}

/** The uuids of an area's live messages, oldest first, read over HTTP as the sysop. */
export async function uuidsOf(board: MessageTestBoard, areaTag: string): Promise<string[]> {
  const response = await board.app.inject({
    method: 'GET',
    url: `${API}/messages/areas/${areaTag}/messages?limit=100`,
    headers: board.sysop.auth,
  });
  return (response.json() as { data: { uuid: string }[] }).data.map((message) => message.uuid);
}
