import { describe, expect, it } from 'vitest';
import { createAreaAccess } from '../../src/access/area-access.js';
import { compileBoardAreas } from '../../src/access/board-areas.js';
import type { Caller, CallerUser } from '../../src/caller.js';
import { ConfigError } from '../../src/config/config-error.js';
import { configFromObject } from '../../src/config/load-config.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../src/errors.js';

const clock = { now: () => new Date('2026-11-23T12:00:00Z') };
const anonymous: Caller = { kind: 'anonymous', isSecure: false };

function userCaller(groups: string[], id = 7): Caller {
  const user: CallerUser = {
    id,
    username: `user${id}`,
    groups,
    accountCreatedAt: new Date('2020-01-01T00:00:00Z'),
    loginCount: 1,
    postCount: 0,
    uploadCount: 0,
    uploadBytes: 0,
    downloadCount: 0,
    downloadBytes: 0,
    achievementCount: 0,
    achievementPoints: 0,
    properties: {},
  };
  return { kind: 'user', user, via: 'token', scopes: new Set(['read', 'write']), isSecure: false, session: null };
}

function accessFor(raw: Record<string, unknown>) {
  const config = configFromObject({ database: { url: 'sqlite::memory:' }, ...raw });
  return createAreaAccess({ config, areas: compileBoardAreas(config), clock });
}

const AREA_TAGS = ['general', 'gossip', 'staff_chat', 'staff', 'news1', 'news2', 'newsX', 'alpha', 'beta', 'Gamma'];

function messageBoard(rule: { include?: string[]; exclude?: string[] }) {
  return accessFor({
    messageConferences: {
      main: { name: 'Main', areas: Object.fromEntries(AREA_TAGS.map((tag) => [tag, { name: tag }])) },
    },
    contentServers: { web: { restApi: { messages: { publicAccess: { main: rule } } } } },
  });
}

function publicTags(rule: { include?: string[]; exclude?: string[] }): string[] {
  const access = messageBoard(rule);
  return AREA_TAGS.filter((tag) => {
    try {
      access.readableMessageArea(anonymous, tag);
      return true;
    } catch {
      return false;
    }
  });
}

describe('public allowlist for anonymous readers', () => {
  it.each([
    [{ include: ['*'] }, AREA_TAGS],
    [{ include: ['*'], exclude: ['staff*'] }, AREA_TAGS.filter((tag) => !tag.startsWith('staff'))],
    [{ include: ['news?'] }, ['news1', 'news2', 'newsX']],
    [{ include: ['news[12]'] }, ['news1', 'news2']],
    [{ include: ['{alpha,beta}'] }, ['alpha', 'beta']],
    [{ include: ['g*'] }, ['general', 'gossip']],
    [{ include: ['gamma'] }, []],
    [{ include: [] }, []],
    [{}, []],
    [{ include: ['general', 'gossip'], exclude: ['gossip'] }, ['general']],
    [{ include: ['*'], exclude: ['*'] }, []],
  ])('%j exposes exactly the matching tags (exclude beats include, case-sensitive)', (rule, expected) => {
    expect(publicTags(rule)).toEqual(expected);
  });

  it('does not apply to conferences without a rule', () => {
    const access = accessFor({
      messageConferences: {
        open: { name: 'Open', areas: { hello: { name: 'Hello' } } },
        closed: { name: 'Closed', areas: { secret: { name: 'Secret' } } },
      },
      contentServers: { web: { restApi: { messages: { publicAccess: { open: { include: ['*'] } } } } } },
    });
    expect(access.readableMessageArea(anonymous, 'hello').areaTag).toBe('hello');
    expect(() => access.readableMessageArea(anonymous, 'secret')).toThrow(UnauthorizedError);
  });

  it('never grants anonymous writing, and never applies to logged-in callers', () => {
    const access = accessFor({
      messageConferences: { main: { name: 'Main', acs: { read: 'GM[staff]' }, areas: { general: { name: 'G' } } } },
      contentServers: { web: { restApi: { messages: { publicAccess: { main: { include: ['*'] } } } } } },
    });
    expect(() => access.writableMessageArea(anonymous, 'general')).toThrow(UnauthorizedError);
    expect(access.readableMessageArea(anonymous, 'general').areaTag).toBe('general');
    // A logged-in user outside the ACS is refused even though anonymous callers may read.
    expect(() => access.readableMessageArea(userCaller(['users']), 'general')).toThrow(ForbiddenError);
  });

  it('supports the single-rule and per-tag forms for file areas', () => {
    const fileBase = {
      storageTags: { s: 'files' },
      areas: { public_a: { name: 'A', storageTags: ['s'] }, private_b: { name: 'B', storageTags: ['s'] } },
    };
    const single = accessFor({
      fileBase,
      contentServers: { web: { restApi: { files: { publicAccess: { include: ['public_*'] } } } } },
    });
    expect(single.readableFileArea(anonymous, 'public_a').areaTag).toBe('public_a');
    expect(() => single.readableFileArea(anonymous, 'private_b')).toThrow(UnauthorizedError);
    const perTag = accessFor({
      fileBase,
      contentServers: { web: { restApi: { files: { publicAccess: { private_b: { include: ['*'] } } } } } },
    });
    expect(() => perTag.readableFileArea(anonymous, 'public_a')).toThrow(UnauthorizedError);
    expect(perTag.downloadableFileArea(anonymous, 'private_b').areaTag).toBe('private_b');
    expect(() => perTag.writableFileArea(anonymous, 'private_b')).toThrow(UnauthorizedError);
  });
});

describe('ACS on areas', () => {
  const access = accessFor({
    messageConferences: {
      main: {
        name: 'Main',
        acs: { read: 'GM[users]', write: 'GM[users]' },
        areas: {
          open: { name: 'Open' },
          staff: { name: 'Staff', acs: { read: 'GM[staff]', write: 'GM[staff]' } },
          readonly: { name: 'News', acs: { write: 'GM[sysops]' } },
          private_mail: { name: 'Mail' },
          activitypub_shared: { name: 'AP' },
        },
      },
    },
    fileBase: {
      storageTags: { s: 'files' },
      areas: { uploads: { name: 'Uploads', storageTags: ['s'] } },
    },
  });
  const member = userCaller(['users']);
  const staff = userCaller(['users', 'staff']);
  const outsider = userCaller(['guests']);
  const sysop = userCaller(['users', 'sysops']);

  it('needs both the conference ACS and the area ACS', () => {
    expect(access.readableMessageArea(staff, 'staff').areaTag).toBe('staff');
    expect(() => access.readableMessageArea(member, 'staff')).toThrow(ForbiddenError);
    expect(() => access.readableMessageArea(userCaller(['staff']), 'staff')).toThrow(ForbiddenError);
    expect(() => access.readableMessageArea(outsider, 'open')).toThrow(ForbiddenError);
  });

  it('checks write separately from read', () => {
    expect(access.readableMessageArea(member, 'readonly').areaTag).toBe('readonly');
    expect(() => access.writableMessageArea(member, 'readonly')).toThrow(ForbiddenError);
    expect(access.writableMessageArea(sysop, 'readonly').areaTag).toBe('readonly');
  });

  it('hides private mail and ActivityPub areas from everyone, sysop included, and unknown areas', () => {
    for (const caller of [anonymous, member, sysop]) {
      for (const tag of ['private_mail', 'activitypub_shared', 'nowhere']) {
        expect(() => access.readableMessageArea(caller, tag)).toThrow(NotFoundError);
        expect(() => access.writableMessageArea(caller, tag)).toThrow(NotFoundError);
      }
    }
  });

  it('uses the file defaults: users read and download, sysops upload', () => {
    expect(access.readableFileArea(member, 'uploads').areaTag).toBe('uploads');
    expect(access.downloadableFileArea(member, 'uploads').areaTag).toBe('uploads');
    expect(() => access.writableFileArea(member, 'uploads')).toThrow(ForbiddenError);
    expect(access.writableFileArea(sysop, 'uploads').areaTag).toBe('uploads');
    expect(() => access.readableFileArea(anonymous, 'uploads')).toThrow(UnauthorizedError);
  });

  it('lists only the areas a caller may read', () => {
    const conference = compileBoardAreas(
      configFromObject({
        messageConferences: {
          main: { name: 'Main', areas: { a: { name: 'A' }, b: { name: 'B', acs: { read: 'GM[staff]' } } } },
        },
      }),
    ).conferences.get('main');
    if (!conference) throw new Error('conference missing');
    expect(access.visibleAreasOf(member, conference).map((area) => area.areaTag)).toEqual(['a']);
  });
});

describe('ACS in configuration', () => {
  it('stops start-up naming the area when an ACS does not parse', () => {
    const config = configFromObject({
      messageConferences: { main: { name: 'Main', areas: { general: { name: 'G', acs: { read: 'GM[users' } } } } },
    });
    expect(() => compileBoardAreas(config)).toThrow(ConfigError);
    expect(() => compileBoardAreas(config)).toThrow(/messageConferences\.main\.areas\.general\.acs\.read/);
  });

  it('names file areas too', () => {
    const config = configFromObject({
      fileBase: { storageTags: { s: 'f' }, areas: { up: { name: 'Up', storageTags: ['s'], acs: { download: '(' } } } },
    });
    expect(() => compileBoardAreas(config)).toThrow(/fileBase\.areas\.up\.acs\.download/);
  });
});
