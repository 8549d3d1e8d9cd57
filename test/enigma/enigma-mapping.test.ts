import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  boardSections,
  enigmaPasswordOf,
  importedFile,
  importedUser,
  MAX_IMPORTED_ID,
  messageExtras,
  utcTimestamp,
} from '../../src/enigma/enigma-mapping.js';
import { EnigmaSource } from '../../src/enigma/enigma-source.js';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/enigma-board');
const IMPORTED_AT = '2026-11-24T12:00:00.000Z';

/** Issue 21: how ENiGMA½'s rows and settings become baud's, on the real fixture. */
describe('ENiGMA½ to baud mapping', () => {
  let source: EnigmaSource;
  beforeAll(() => {
    source = EnigmaSource.open(FIXTURE);
  });
  afterAll(() => source.close());

  it('carries conferences, areas, file areas and the allowlist over from where ENiGMA½ reads them', () => {
    const { sections, skipped } = boardSections(source.config);
    expect(skipped).toEqual([]);
    expect(sections.general).toEqual({ boardName: 'RefBBS' });
    expect(Object.keys(sections.messageConferences)).toEqual(['public_conf', 'retro_conf']);
    expect(sections.messageConferences.public_conf).toEqual({
      name: 'Public Conference',
      desc: 'Public conference for REST API conformance',
      acs: {},
      areas: {
        pub_small: { name: 'Public Small', desc: 'Small public area', acs: {} },
        pub_secret_stuff: { name: 'Secret Stuff', desc: 'Members only (not anonymous)', acs: {} },
        pub_general: { name: 'General', desc: 'Big general area', acs: {} },
      },
    });
    expect(sections.fileBase).toEqual({
      storageTags: { pub_files: 'files/pub_files', member_uploads: 'files/member_uploads' },
      areas: {
        pub_files: {
          name: 'Public Files',
          desc: 'Public file area',
          storageTags: ['pub_files'],
          acs: { read: 'GM[users]', write: 'GM[users]', download: 'GM[users]' },
        },
        member_uploads: {
          name: 'Member Uploads',
          desc: 'Members only file area',
          storageTags: ['member_uploads'],
          acs: { read: 'GM[users]', write: 'GM[users]', download: 'GM[users]' },
        },
      },
    });
    expect(sections.publicAccess).toEqual({
      messages: {
        public_conf: { include: ['pub_small', 'pub_general'], exclude: ['pub_secret*'] },
        retro_conf: { include: ['retro_*'], exclude: [] },
      },
      files: { pub_files: { include: ['*'], exclude: [] } },
    });
  });

  it('reports a tag baud cannot use and an allowlist entry for nothing, instead of dropping them silently', () => {
    const { sections, skipped } = boardSections({
      ...source.config,
      raw: { contentServers: { web: { handlers: { restApi: { files: { publicAccess: { pub_files: {} } } } } } } },
      messageConferences: {
        'bad tag': { name: 'Bad', areas: {} },
        ok: { name: 'OK', areas: { 'a/b': { name: 'x' } } },
      },
      fileBase: { storageTags: { main: 'main' }, areas: { lost: { name: 'Lost', storageTags: ['nowhere'] } } },
      restApi: {
        messages: { publicAccess: { ghost: { include: ['*'] } } },
        files: { publicAccess: { include: ['*'] } },
      },
    });
    expect(Object.keys(sections.messageConferences)).toEqual(['ok']);
    expect(sections.publicAccess.files).toEqual({ include: ['*'], exclude: [] });
    expect(skipped).toEqual([
      { kind: 'message conference', reason: '"bad tag": baud tags are 1–64 of A–Z a–z 0–9 _ . -' },
      { kind: 'message area', reason: '"a/b": baud tags are 1–64 of A–Z a–z 0–9 _ . -' },
      { kind: 'file area', reason: '"lost": none of its storage tags is defined' },
      { kind: 'public allowlist', reason: 'messages.publicAccess.ghost: no such conference' },
      {
        kind: 'public allowlist',
        reason:
          'contentServers.web.handlers.restApi.files.publicAccess: ENiGMA½ never read it there (it reads contentServers.web.restApi.files.publicAccess), so it was not in force and is not carried over',
      },
    ]);
  });

  it('maps a user’s profile, counters and status, and keeps every other property', () => {
    const users = source.users();
    const alice = users.find((user) => user.userName === 'alice');
    const dave = users.find((user) => user.userName === 'dave');
    if (!alice || !dave) throw new Error('fixture users missing');
    const row = importedUser(alice, IMPORTED_AT);
    expect(row).toMatchObject({
      id: 2,
      username: 'alice',
      realName: 'Alice Hartmann',
      location: 'Portland, OR',
      affiliations: 'iCE / Blocktronics',
      emailAddress: 'alice@example.invalid',
      webAddress: 'https://alice.example.org/',
      autoSignature: '-- alice\n   "Keep your modem warm."',
      createdAt: '2026-11-23T14:47:42.127Z',
      disabledAt: null,
      lastLoginAt: '2026-11-23T15:09:58.618Z',
      loginCount: 2,
      downloadCount: 5,
      downloadBytes: 29465,
    });
    const kept = JSON.parse(row.properties) as Record<string, string>;
    expect(kept['enigma.theme_id']).toBe('luciano_blocktronics');
    expect(kept['enigma.birthdate']).toBe('1980-01-01T00:00:00.000+00:00');
    expect(Object.keys(kept).some((name) => name.startsWith('enigma.pw_'))).toBe(false);
    expect(alice.groups).toEqual(['users']);
    expect(enigmaPasswordOf(alice)).toMatchObject({ iterations: 210000, digest: 'sha512', keyLen: 64 });

    const locked = importedUser(dave, IMPORTED_AT);
    expect(locked.disabledAt).toBe(IMPORTED_AT);
    expect(locked.affiliations).toBeNull();
    expect(JSON.parse(locked.properties)['enigma.account_status']).toBe('0');
  });

  it('turns FTN meta into baud’s network and names what has no place there', () => {
    const [first] = source.messageBatches(10, MAX_IMPORTED_ID, 2165);
    const echo = first?.find((message) => message.id === 2166);
    if (!echo) throw new Error('message 2166 missing');
    const extras = messageExtras(echo.meta, new Set([1, 2, 3]));
    expect(extras.network).toEqual({
      ftnArea: 'RETRO.BBS',
      ftnMsgId: '2:5020/1042 6d3a1b2c',
      ftnOrigNode: '2:5020/1042',
      ftnOrigin: ' * Origin: Remote Test Node (2:5020/1042)',
      ftnPath: ['5020/1042 480/99'],
      ftnSeenBy: ['SEEN-BY: 480/99 100 5020/1042', 'SEEN-BY: 5020/1042 2432/200'],
      ftnTearLine: '--- ENiGMA 1/2 v0.5.0-beta (linux; x64; 20.0.0)',
    });
    expect(extras.fromUserId).toBeNull();
    expect([...extras.unmapped].sort()).toEqual([
      'FtnKludge CHRS',
      'FtnKludge PID',
      'FtnKludge TZUTC',
      'FtnProperty ftn_attr_flags',
      'FtnProperty ftn_cost',
      'FtnProperty ftn_dest_network',
      'FtnProperty ftn_dest_node',
      'FtnProperty ftn_msg_dest_net',
      'FtnProperty ftn_msg_dest_node',
      'FtnProperty ftn_msg_orig_net',
      'FtnProperty ftn_msg_orig_node',
    ]);
    const local = messageExtras([{ category: 'System', name: 'local_from_user_id', value: '3' }], new Set([3]));
    expect(local).toEqual({ network: {}, fromUserId: 3, unmapped: [] });
  });

  it('maps a file’s meta: uploader, float download count, release year, hash tags', () => {
    const files = source.files();
    const starfall = files.find((file) => file.id === 24);
    const nodelist = files.find((file) => file.id === 30);
    if (!starfall || !nodelist) throw new Error('fixture files missing');
    expect(importedFile(starfall, new Set([2]), IMPORTED_AT)).toMatchObject({
      id: 24,
      fileName: 'starfall12.zip',
      uploadByUserId: 2,
      dlCount: 5,
      estReleaseYear: 1995,
      archiveType: 'application/zip',
    });
    expect(importedFile(nodelist, new Set([2]), IMPORTED_AT)).toMatchObject({
      uploadByUserId: null,
      hashTags: ['fidonet', 'nodelist', 'zone1'],
    });
  });

  it('reads times with any offset as UTC', () => {
    expect(utcTimestamp('2026-11-15T11:11:00.000+01:00')).toBe('2026-11-15T10:11:00.000Z');
    expect(utcTimestamp('2026-11-15T03:00:00.000-08:00')).toBe('2026-11-15T11:00:00.000Z');
    expect(utcTimestamp('not a time')).toBeNull();
    expect(utcTimestamp(null)).toBeNull();
  });

  it('names what the board holds that has no place in baud', () => {
    expect(source.leftovers()).toEqual([
      { kind: 'sessions', reason: 'ENiGMA½ login sessions end: users log in again', count: 17 },
    ]);
  });

  it('says what to do when the directory is not an ENiGMA½ installation', () => {
    expect(() => EnigmaSource.open(path.join(FIXTURE, 'db'))).toThrow(
      /config\.hjson not found: give the ENiGMA½ installation directory \(it holds config\/ and db\/\)/,
    );
  });
});
