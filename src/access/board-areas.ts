import { type CompiledAcs, compileAcs } from '../acs/acs.js';
import { ConfigError } from '../config/config-error.js';
import type { Config } from '../config/load-config.js';

/** ACS used when an area or conference leaves `acs.read` / `acs.write` out (decisions.md, ACS). */
export const DEFAULT_ACS = {
  message: { read: 'GM[users]', write: 'GM[users]' },
  file: { read: 'GM[users]', write: 'GM[sysops]', download: 'GM[users]' },
} as const;

export interface MessageConferenceDef {
  readonly confTag: string;
  readonly name: string;
  readonly desc: string;
  readonly read: CompiledAcs;
  readonly write: CompiledAcs;
  /** Areas in configuration order; blocked areas (private mail, ActivityPub) are left out. */
  readonly areas: readonly MessageAreaDef[];
}

export interface MessageAreaDef {
  readonly areaTag: string;
  readonly confTag: string;
  readonly name: string;
  readonly desc: string;
  readonly read: CompiledAcs;
  readonly write: CompiledAcs;
}

export interface FileAreaDef {
  readonly areaTag: string;
  readonly name: string;
  readonly desc: string;
  /** Storage tags in configuration order; uploads go to the first. */
  readonly storageTags: readonly string[];
  readonly read: CompiledAcs;
  readonly write: CompiledAcs;
  readonly download: CompiledAcs;
}

export interface BoardAreas {
  readonly conferences: ReadonlyMap<string, MessageConferenceDef>;
  readonly messageAreas: ReadonlyMap<string, MessageAreaDef>;
  readonly fileAreas: ReadonlyMap<string, FileAreaDef>;
}

/** Private mail and ActivityPub areas are never reachable through the API, whoever asks. */
export function isBlockedMessageArea(areaTag: string): boolean {
  return areaTag === 'private_mail' || areaTag.startsWith('activitypub');
}

function compile(source: string | undefined, fallback: string, what: string): CompiledAcs {
  try {
    return compileAcs(source ?? fallback, what);
  } catch (error) {
    throw new ConfigError('config.invalid', `configuration: ${(error as Error).message}`);
  }
}

/**
 * Builds the board's conferences and areas from configuration, parsing every ACS string once.
 * An unparseable ACS is a `ConfigError` naming the area, so start-up stops instead of
 * silently allowing access.
 */
export function compileBoardAreas(config: Config): BoardAreas {
  const conferences = new Map<string, MessageConferenceDef>();
  const messageAreas = new Map<string, MessageAreaDef>();
  for (const [confTag, conference] of Object.entries(config.messageConferences)) {
    const where = `messageConferences.${confTag}`;
    const areas: MessageAreaDef[] = [];
    for (const [areaTag, area] of Object.entries(conference.areas)) {
      const areaWhere = `${where}.areas.${areaTag}`;
      const def: MessageAreaDef = {
        areaTag,
        confTag,
        name: area.name,
        desc: area.desc,
        read: compile(area.acs.read, DEFAULT_ACS.message.read, `${areaWhere}.acs.read`),
        write: compile(area.acs.write, DEFAULT_ACS.message.write, `${areaWhere}.acs.write`),
      };
      if (isBlockedMessageArea(areaTag)) continue;
      areas.push(def);
      messageAreas.set(areaTag, def);
    }
    conferences.set(confTag, {
      confTag,
      name: conference.name,
      desc: conference.desc,
      read: compile(conference.acs.read, DEFAULT_ACS.message.read, `${where}.acs.read`),
      write: compile(conference.acs.write, DEFAULT_ACS.message.write, `${where}.acs.write`),
      areas,
    });
  }
  const fileAreas = new Map<string, FileAreaDef>();
  for (const [areaTag, area] of Object.entries(config.fileBase.areas)) {
    const where = `fileBase.areas.${areaTag}`;
    fileAreas.set(areaTag, {
      areaTag,
      name: area.name,
      desc: area.desc,
      storageTags: area.storageTags,
      read: compile(area.acs.read, DEFAULT_ACS.file.read, `${where}.acs.read`),
      write: compile(area.acs.write, DEFAULT_ACS.file.write, `${where}.acs.write`),
      download: compile(area.acs.download, DEFAULT_ACS.file.download, `${where}.acs.download`),
    });
  }
  return { conferences, messageAreas, fileAreas };
}
