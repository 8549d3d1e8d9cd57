import { type Database, pendingMigrations } from '../db/database.js';
import type { FileService } from '../files/file-service.js';
import { StorageUnwritableError } from '../files/file-storage.js';

/** How long one readiness check may take before it counts as failed: a hung database is not ready. */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

/** `ok`, or what is wrong, in words an operator acts on. */
export type CheckOutcome = 'ok' | string;

export interface ReadinessReport {
  readonly isReady: boolean;
  /** What the probe answers. Safe to show anyone: no driver message, address or path. */
  readonly checks: {
    readonly database: CheckOutcome;
    readonly migrations: CheckOutcome;
    readonly storage: CheckOutcome;
  };
  /** The errors behind failed checks, for the node's log only. */
  readonly errors: readonly { readonly check: 'database' | 'storage'; readonly error: unknown }[];
}

/** Whether this node can serve: what a load balancer's readiness probe asks. */
export interface HealthService {
  /** The database answers, every migration this build knows is applied, every storage directory takes files. */
  checkReadiness(): Promise<ReadinessReport>;
}

type Settled<T> = { readonly value: T } | { readonly error: unknown };

class CheckTimeoutError extends Error {}

/** `work`'s result, or its error, or a CheckTimeoutError after `timeoutMs`: a probe never hangs. */
async function settleWithin<T>(work: Promise<T>, timeoutMs: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ error: new CheckTimeoutError() }), timeoutMs);
  });
  try {
    return await Promise.race([
      work.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
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
  const failure = (error: unknown) =>
    error instanceof CheckTimeoutError ? `no answer within ${timeoutMs} ms` : 'failed (see the log)';
  return {
    async checkReadiness() {
      // One read answers two checks: the database answers, and which migrations it has.
      const [migrationState, storageState] = await Promise.all([
        settleWithin(pendingMigrations(deps.database), timeoutMs),
        settleWithin(deps.files.checkStorageWritable(), timeoutMs),
      ]);
      const errors: { check: 'database' | 'storage'; error: unknown }[] = [];
      let database: CheckOutcome = 'ok';
      let migrations: CheckOutcome = 'ok';
      if ('error' in migrationState) {
        errors.push({ check: 'database', error: migrationState.error });
        database = failure(migrationState.error);
        migrations = 'unknown';
      } else if (migrationState.value.length > 0) {
        migrations = `not applied: ${migrationState.value.join(', ')} (run baud db migrate)`;
      }
      let storage: CheckOutcome = 'ok';
      if ('error' in storageState) {
        errors.push({ check: 'storage', error: storageState.error });
        storage =
          storageState.error instanceof StorageUnwritableError
            ? storageState.error.message
            : failure(storageState.error);
      }
      return {
        isReady: database === 'ok' && migrations === 'ok' && storage === 'ok',
        checks: { database, migrations, storage },
        errors,
      };
    },
  };
}
