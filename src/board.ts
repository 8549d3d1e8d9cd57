import { createAreaAccess } from './access/area-access.js';
import { type BoardAreas, compileBoardAreas } from './access/board-areas.js';
import { createAccessTokens } from './auth/access-tokens.js';
import { createIdentityServices } from './auth/identity-services.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config/load-config.js';
import { createCursorCodec } from './db/cursor-codec.js';
import { type Database, migrateToLatest, openDatabase } from './db/database.js';
import { loadOrCreateSecret } from './db/settings-store.js';
import { openFileBase } from './files/file-service.js';
import { createMessageService } from './messages/message-service.js';
import { createSystemService } from './system/system-service.js';
import { createUserService } from './users/user-service.js';

/**
 * A running board: configuration, database, clock and the domain services built on them.
 * The HTTP app and the CLI both work through one of these, so they cannot disagree on a rule.
 */
export async function openBoard(config: Config, options: { clock?: Clock; migrate?: boolean } = {}) {
  const clock = options.clock ?? systemClock;
  // ACS errors are configuration errors: find them before touching the database.
  const areas = compileBoardAreas(config);
  const database = await openDatabase(config.database.url, { poolSize: config.database.poolSize });
  try {
    if (options.migrate ?? true) await migrateToLatest(database);
    return await assembleBoard(config, database, clock, areas);
  } catch (error) {
    await database.close();
    throw error;
  }
}

async function assembleBoard(config: Config, database: Database, clock: Clock, areas: BoardAreas) {
  const { db } = database;
  const configuredSecret = config.contentServers.web.restApi.jwtSecret;
  const jwtSecret = configuredSecret
    ? new TextEncoder().encode(configuredSecret)
    : await loadOrCreateSecret(db, 'jwtSecret');
  const cursorSecret = await loadOrCreateSecret(db, 'cursorSecret');
  const refreshSuccessorSecret = await loadOrCreateSecret(db, 'refreshSuccessorSecret');
  const users = createUserService({ db, config, clock });
  const access = createAreaAccess({ config, areas, clock });
  return {
    config,
    database,
    db,
    clock,
    cursors: createCursorCodec(cursorSecret),
    ...createIdentityServices({
      db,
      config,
      clock,
      users,
      accessTokens: createAccessTokens(jwtSecret, clock),
      refreshSuccessorSecret,
    }),
    users,
    areas,
    access,
    messages: createMessageService({ db, clock, areas, access }),
    files: await openFileBase({ db, config, clock, areas, access }),
    system: createSystemService({ db, config, clock, users }),
    close: () => database.close(),
  };
}

export type Board = Awaited<ReturnType<typeof openBoard>>;
