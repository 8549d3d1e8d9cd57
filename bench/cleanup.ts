/**
 * Everything a run leaves behind (processes, temp dirs, PostgreSQL schemas) is registered
 * here as soon as it exists, and undone in reverse order at the end, on failure and on
 * Ctrl-C alike.
 */
export interface Cleanup {
  /** Registers `undo`; the returned function runs it now (once) instead of at the end. */
  defer(label: string, undo: () => unknown): () => Promise<void>;
  /** Runs every registered undo, newest first; a failing one is reported and the rest still run. */
  runAll(): Promise<void>;
}

export function createCleanup(report: (text: string) => void): Cleanup {
  const pending: { label: string; undo: () => unknown }[] = [];

  async function runOne(entry: { label: string; undo: () => unknown }): Promise<void> {
    const index = pending.indexOf(entry);
    if (index === -1) return;
    pending.splice(index, 1);
    try {
      await entry.undo();
    } catch (error) {
      report(`cleanup: ${entry.label} failed: ${(error as Error).message}`);
    }
  }

  return {
    defer(label, undo) {
      const entry = { label, undo };
      pending.push(entry);
      return () => runOne(entry);
    },
    async runAll() {
      for (let entry = pending.at(-1); entry; entry = pending.at(-1)) await runOne(entry);
    },
  };
}
