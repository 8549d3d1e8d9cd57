import { describe, expect, it } from 'vitest';
import { compileBoardAreas } from '../../src/access/board-areas.js';
import { findPublicAreasClosedToMembers } from '../../src/access/public-areas-closed-to-members.js';
import { configFromObject } from '../../src/config/load-config.js';

type Acs = Record<string, string>;
type PublicAccess = { include: string[]; exclude?: string[] };

const OPEN: PublicAccess = { include: ['*'] };
const CLOSED: PublicAccess = { include: [] };

function closedMessageAreas(conferenceAcs: Acs, areaAcs: Acs, publicAccess: PublicAccess): string[] {
  const config = configFromObject({
    database: { url: 'sqlite::memory:' },
    messageConferences: {
      main: { name: 'Main', acs: conferenceAcs, areas: { news: { name: 'News', acs: areaAcs } } },
    },
    contentServers: { web: { restApi: { messages: { publicAccess: { main: publicAccess } } } } },
  });
  const found = findPublicAreasClosedToMembers(config, compileBoardAreas(config));
  expect(found.fileAreas).toEqual([]);
  return found.messageAreas.map((area) => `${area.confTag}/${area.areaTag}`);
}

function closedFileAreas(areaAcs: Acs, publicAccess: unknown): string[] {
  const config = configFromObject({
    database: { url: 'sqlite::memory:' },
    fileBase: {
      storageTags: { main: 'files/main' },
      areas: { uploads: { name: 'Uploads', storageTags: ['main'], acs: areaAcs } },
    },
    contentServers: { web: { restApi: { files: { publicAccess } } } },
  });
  const found = findPublicAreasClosedToMembers(config, compileBoardAreas(config));
  expect(found.messageAreas).toEqual([]);
  return found.fileAreas.map((area) => area.areaTag);
}

describe('public areas closed to members (allowlist × read ACS)', () => {
  it.each([
    // [verdict, why, conference acs, area acs, allowlist]
    ['does not flag', 'default ACS (GM[users]) on both', {}, {}, OPEN],
    ['flags', 'a sysops-only area', {}, { read: 'GM[sysops]' }, OPEN],
    ['does not flag', 'a sysops-only area nobody allowlisted', {}, { read: 'GM[sysops]' }, CLOSED],
    [
      'does not flag',
      'a sysops-only area the allowlist excludes',
      {},
      { read: 'GM[sysops]' },
      { include: ['*'], exclude: ['news'] },
    ],
    ['flags', 'a sysops-only conference', { read: 'GM[sysops]' }, {}, OPEN],
    ['does not flag', 'sysops or members', {}, { read: 'GM[sysops,users]' }, OPEN],
    ['does not flag', 'an empty ACS (every authenticated user)', {}, { read: '' }, OPEN],
    ['does not flag', 'everyone but the banned', {}, { read: '!GM[banned]' }, OPEN],
    ['flags', 'everyone but members', {}, { read: '!GM[users]' }, OPEN],
    ['flags', 'one user by id', {}, { read: 'ID1' }, OPEN],
    ['flags', 'ten posts first', {}, { read: 'GM[users]&NP10' }, OPEN],
    ['does not flag', 'a first login (every member has one)', {}, { read: 'NC1' }, OPEN],
    ['flags', 'a month-old account', {}, { read: 'AA30' }, OPEN],
    ['flags', 'weekends only', {}, { read: 'WD[0,6]' }, OPEN],
    ['flags', 'after 10:00 UTC', {}, { read: 'MM600' }, OPEN],
    ['flags', 'before 10:00 UTC', {}, { read: '!MM600' }, OPEN],
    ['does not flag', 'TLS (a transport rule, not membership)', {}, { read: 'GM[users]&SC' }, OPEN],
    ['does not flag', 'a write ACS for sysops only (reading is open)', {}, { write: 'GM[sysops]' }, OPEN],
  ])('%s: %s (message area)', (verdict, _why, conferenceAcs, areaAcs, publicAccess) => {
    expect(closedMessageAreas(conferenceAcs, areaAcs, publicAccess)).toEqual(verdict === 'flags' ? ['main/news'] : []);
  });

  it.each([
    ['does not flag', 'default ACS (read and download GM[users], upload GM[sysops])', {}, OPEN],
    ['flags', 'a sysops-only area', { read: 'GM[sysops]' }, OPEN],
    ['flags', 'sysops-only downloads', { download: 'GM[sysops]' }, OPEN],
    ['does not flag', 'a sysops-only area nobody allowlisted', { read: 'GM[sysops]' }, CLOSED],
    ['flags', 'a sysops-only area in the per-tag allowlist', { read: 'GM[sysops]' }, { uploads: OPEN }],
    ['does not flag', 'members may read and download', { read: 'GM[users]|GM[sysops]', download: '' }, OPEN],
  ])('%s: %s (file area)', (verdict, _why, areaAcs, publicAccess) => {
    expect(closedFileAreas(areaAcs, publicAccess)).toEqual(verdict === 'flags' ? ['uploads'] : []);
  });
});
