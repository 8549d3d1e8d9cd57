import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import Hjson from 'hjson';
import { compileBoardAreas } from '../access/board-areas.js';
import { ConfigError } from '../config/config-error.js';
import { type Config, configFromObject, loadConfig, resolveConfigPath } from '../config/load-config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import {
  IMPORT_KINDS,
  type ImportKind,
  type ImportProgress,
  type ImportSummary,
  importEnigmaBoard,
} from '../enigma/enigma-import.js';
import { createEnigmaImportStore } from '../enigma/enigma-import-store.js';
import { type BaudBoardSections, boardSections, type Skipped } from '../enigma/enigma-mapping.js';
import { EnigmaSource } from '../enigma/enigma-source.js';
import { type CommonOptions, printResult, withCommonOptions } from './cli-context.js';
import { createProgressBar, type ProgressBar } from './progress-bar.js';
import { withRunLock } from './run-lock.js';

const KIND_NAMES: Readonly<Record<ImportKind, string>> = {
  users: 'users',
  apiKeys: 'API keys',
  messages: 'messages',
  files: 'files',
  calls: 'last callers',
  pointers: 'new-scan pointers',
};

type RawConfig = Record<string, unknown>;

/** hjson's round-trip mode, which keeps a file's comments (not in @types/hjson). */
const HjsonRoundTrip = (
  Hjson as unknown as { rt: { parse(text: string): unknown; stringify(value: unknown, options?: object): string } }
).rt;

const isRecord = (value: unknown): value is RawConfig =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The object at `keys` inside `raw`, created (as an empty object) where missing. */
function objectAt(raw: RawConfig, ...keys: string[]): RawConfig {
  let node = raw;
  for (const key of keys) {
    if (!isRecord(node[key])) node[key] = {};
    node = node[key] as RawConfig;
  }
  return node;
}

/**
 * baud's configuration with the ENiGMA½ board's sections merged in: its conferences, areas,
 * file areas, storage tags and allowlist (an imported tag replaces one of the same name).
 * Comments of an existing file are kept (HJSON round trip).
 */
function mergedConfig(existing: RawConfig, sections: BaudBoardSections): RawConfig {
  const raw = existing;
  const general = objectAt(raw, 'general');
  if (sections.general.boardName && general.boardName === undefined) general.boardName = sections.general.boardName;
  Object.assign(objectAt(raw, 'messageConferences'), sections.messageConferences);
  Object.assign(objectAt(raw, 'fileBase', 'storageTags'), sections.fileBase.storageTags);
  Object.assign(objectAt(raw, 'fileBase', 'areas'), sections.fileBase.areas);
  const restApi = objectAt(raw, 'contentServers', 'web', 'restApi');
  Object.assign(objectAt(restApi, 'messages', 'publicAccess'), sections.publicAccess.messages);
  const files = objectAt(restApi, 'files');
  files.publicAccess = { ...(isRecord(files.publicAccess) ? files.publicAccess : {}), ...sections.publicAccess.files };
  return raw;
}

function summaryLines(summary: ImportSummary, seconds: number): string[] {
  const lines = [summary.dryRun ? 'Dry run: nothing was written. A run would do this:' : 'Imported:'];
  for (const kind of IMPORT_KINDS) {
    const count = summary.counts[kind];
    const parts = [`${count.imported} ${summary.dryRun ? 'to import' : 'imported'}`];
    if (count.alreadyThere > 0) parts.push(`${count.alreadyThere} already there`);
    if (count.skipped > 0) parts.push(`${count.skipped} skipped`);
    lines.push(`  ${KIND_NAMES[kind].padEnd(18)} ${String(count.found).padStart(8)} found: ${parts.join(', ')}`);
  }
  if (summary.skipped.length > 0) {
    lines.push('Not carried over, or carried over differently:');
    for (const entry of summary.skipped) lines.push(`  ${entry.kind}: ${entry.reason} (${entry.count})`);
  }
  const messages = summary.counts.messages.imported;
  lines.push(
    `Took ${seconds.toFixed(1)} s${messages > 0 ? ` (${Math.round(messages / Math.max(seconds, 0.001)).toLocaleString('en-US')} messages/s)` : ''}.`,
  );
  return lines;
}

/**
 * The import proper, into the board of `config`: only into a board that is empty or was
 * imported from this very ENiGMA½ board, one run at a time, and the configuration file is
 * written only once the board is known to be the right one.
 */
async function importIntoBoard(
  source: EnigmaSource,
  target: {
    config: Config;
    configPath: string;
    merged: RawConfig;
    originalText: string;
    link: boolean;
    onProgress?: (progress: ImportProgress) => void;
  },
): Promise<ImportSummary> {
  const { config, configPath } = target;
  const sourceId = realpathSync(source.dir);
  mkdirSync(config.paths.dataDir, { recursive: true });
  return withRunLock(path.join(config.paths.dataDir, '.enigma-import.lock'), 'an ENiGMA½ import', async () => {
    const database = await openDatabase(config.database.url, { poolSize: 2 });
    try {
      await migrateToLatest(database);
      const store = createEnigmaImportStore(database);
      const importedFrom = await store.importedFrom();
      if (importedFrom !== null && importedFrom !== sourceId) {
        throw new ConfigError(
          'enigma.target-not-empty',
          `this board was imported from ${importedFrom}, not ${sourceId}: import into a new board (--config <new path>)`,
        );
      }
      if (importedFrom === null && (await store.hasContent())) {
        throw new ConfigError(
          'enigma.target-not-empty',
          `the board of ${configPath} already has users, messages or files: import into a new board (--config <new path>)`,
        );
      }
      // The configuration is written beside the old one and loaded back as `baud serve` would
      // load it (ACS included) before anything is marked or replaced: an import never leaves a
      // board that will not start.
      const text = HjsonRoundTrip.stringify(target.merged, { bracesSameLine: true, separator: false });
      const written = text === target.originalText ? null : `${configPath}.enigma-import-${process.pid}`;
      if (written) {
        mkdirSync(path.dirname(configPath), { recursive: true });
        writeFileSync(written, text);
      }
      try {
        compileBoardAreas(loadConfig({ configPath: written ?? configPath, env: process.env }));
      } catch (error) {
        if (written) rmSync(written, { force: true });
        throw error;
      }
      await store.markImportedFrom(sourceId);
      if (written) renameSync(written, configPath);
      for (const directory of Object.values(config.fileBase.storageTags)) mkdirSync(directory, { recursive: true });
      return await importEnigmaBoard(source, database, {
        dryRun: false,
        link: target.link,
        storageDirectories: config.fileBase.storageTags,
        ...(target.onProgress ? { onProgress: target.onProgress } : {}),
      });
    } finally {
      await database.close();
    }
  });
}

/** `baud import enigma`: moves an ENiGMA½ board into a new (or its own earlier) baud board. */
export function registerImportCommands(program: Command): void {
  const imports = program.command('import').description('move another BBS into baud');
  withCommonOptions(
    imports
      .command('enigma <dir>')
      .description(
        'import an ENiGMA½ board (its config/, db/ and file base) into a new or empty baud board; safe to run again',
      )
      .option('--dry-run', 'read everything and report what would be imported, writing nothing')
      .option('--link', 'hard-link files into baud’s storage instead of copying them'),
  ).action(async (dir: string, options: CommonOptions & { dryRun?: boolean; link?: boolean }) => {
    const source = EnigmaSource.open(dir);
    try {
      const { sections, skipped } = boardSections(source.config);
      const configPath = resolveConfigPath({
        ...(options.config ? { configPath: options.config } : {}),
        env: process.env,
      });
      const exists = existsSync(configPath);
      const originalText = exists ? readFileSync(configPath, 'utf8') : '';
      const existing = exists ? (HjsonRoundTrip.parse(originalText) as RawConfig) : {};
      const merged = mergedConfig(existing, sections);
      const config = configFromObject(merged, {
        env: process.env,
        baseDir: path.dirname(configPath),
        configPath,
        exists,
      });
      // An ACS baud cannot parse stops the import (a dry run too) before anything is written:
      // guessing another rule could open an area, and `baud serve` would refuse to start.
      compileBoardAreas(config);
      const bars = new Map<ImportKind, ProgressBar>();
      const onProgress = options.json
        ? undefined
        : ({ kind, done, total }: ImportProgress) => {
            let bar = bars.get(kind);
            if (!bar) {
              for (const other of bars.values()) other.finish();
              bar = createProgressBar(KIND_NAMES[kind].padEnd(12), KIND_NAMES[kind]);
              bars.set(kind, bar);
            }
            bar.update(done, total);
          };
      const started = performance.now();
      let summary: ImportSummary;
      if (options.dryRun) {
        summary = await importEnigmaBoard(source, null, {
          dryRun: true,
          link: Boolean(options.link),
          storageDirectories: config.fileBase.storageTags,
        });
      } else {
        summary = await importIntoBoard(source, {
          config,
          configPath,
          merged,
          originalText,
          link: Boolean(options.link),
          ...(onProgress ? { onProgress } : {}),
        });
      }
      for (const bar of bars.values()) bar.finish();
      const configSkips: Array<Skipped & { count: number }> = skipped.map((entry) => ({ ...entry, count: 1 }));
      const full = { ...summary, skipped: [...configSkips, ...summary.skipped, ...source.leftovers()], configPath };
      printResult(options, full, summaryLines(full, (performance.now() - started) / 1000));
    } finally {
      source.close();
    }
  });
}
