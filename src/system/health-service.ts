import { type Database, pendingMigrations, pingDatabase } from '../db/database.js';
import type { FileService } from '../files/file-service.js';

/** How long one readiness check may take before it counts as failed: a hung database is not ready. */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

/** `ok`, or what is wrong, in words an operator acts on. */
export type CheckOutcome = 'ok' | string;

export interface ReadinessReport {
  readonly isReady: boolean;
  readonly checks: {
    readonly database: CheckOutcome;
    readonly migrations: CheckOutcome;
    readonly storage: CheckOutcome;
  };
}

/** Whether this node can serve: what a load balancer's readiness probe asks. */
export interface HealthService {
  /** The database answers, every migration this build knows is applied, every storage directory takes files. */
  checkReadiness(): Promise<ReadinessReport>;
}

async function outcomeOf(check: () => Promise<CheckOutcome | undefined>, timeoutMs: number): Promise<CheckOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      check().then(
        (outcome) => outcome ?? 'ok',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function createHealthService(deps: {
  database: Database;
  files: Pick<FileService, 'checkStorageWritable'>;
  timeoutMs?: number;
}): HealthService {
  const timeoutMs = deps.timeoutMs ?? READINESS_CHECK_TIMEOUT_MS;
  return {
    async checkReadiness() {
      const [database, migrations, storage] = await Promise.all([
        outcomeOf(async () => {
          await pingDatabase(deps.database);
          return undefined;
        }, timeoutMs),
        outcomeOf(async () => {
          const pending = await pendingMigrations(deps.database);
          return pending.length === 0 ? undefined : `not applied: ${pending.join(', ')} (run baud db migrate)`;
        }, timeoutMs),
        outcomeOf(async () => {
          await deps.files.checkStorageWritable();
          return undefined;
        }, timeoutMs),
      ]);
      return {
        isReady: database === 'ok' && migrations === 'ok' && storage === 'ok',
        checks: { database, migrations, storage },
      };
    },
  };
}
