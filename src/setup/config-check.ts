import { type BoardAreas, compileBoardAreas } from '../access/board-areas.js';
import { findPublicAreasClosedToMembers } from '../access/public-areas-closed-to-members.js';
import type { Config } from '../config/load-config.js';

/** Something a valid configuration does that is almost never meant; the board starts anyway. */
export interface ConfigWarning {
  /** Stable, for scripts reading `baud config check --json`. */
  readonly code: 'public-areas-closed-to-members';
  /** One line, naming what it is about. */
  readonly message: string;
}

function publicAreasClosedToMembersWarning(config: Config, areas: BoardAreas): ConfigWarning | null {
  const { messageAreas, fileAreas } = findPublicAreasClosedToMembers(config, areas);
  if (messageAreas.length === 0 && fileAreas.length === 0) return null;
  const named = [
    ...(messageAreas.length > 0
      ? [`message areas ${messageAreas.map((area) => `${area.confTag}/${area.areaTag}`).join(', ')}`]
      : []),
    ...(fileAreas.length > 0 ? [`file areas ${fileAreas.map((area) => area.areaTag).join(', ')}`] : []),
  ];
  return {
    code: 'public-areas-closed-to-members',
    message:
      `the public allowlist lets anonymous callers read ${named.join(' and ')}, whose read ACS refuses ` +
      'plain members (group "users"): anyone may read them without logging in while members are refused; ' +
      'narrow publicAccess or the ACS if that is not meant',
  };
}

/**
 * Checks a loaded configuration as `baud serve` does before it touches the database (every ACS
 * must parse: a `ConfigError` naming the area otherwise) and returns what it warns about.
 * `areas` are the board's compiled areas when the caller has them already.
 */
export function checkConfig(config: Config, areas: BoardAreas = compileBoardAreas(config)): readonly ConfigWarning[] {
  const warning = publicAreasClosedToMembersWarning(config, areas);
  return warning ? [warning] : [];
}
