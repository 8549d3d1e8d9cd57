import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareQuery } from '../../src/db/prepared-query.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

describeEachDialect('prepared queries', (dialect) => {
  let test: TestBoard;

  beforeAll(async () => {
    test = await createTestBoard(dialect, { config: { database: { poolSize: 1 } } });
    // Everyone joins users.defaultGroups (users); alice is a sysop too.
    for (const [username, groups] of [
      ['alice', ['sysops']],
      ['bob', []],
      ['carol', []],
    ] as const) {
      await test.board.credentials.createAccount({ username, password: 'correct horse battery', groups: [...groups] });
    }
  });
  afterAll(() => test?.close());

  it('runs one compiled query with new values each time, constants kept in place', async () => {
    const { db } = test.board;
    const namesAfter = prepareQuery(db, (p: { afterId: number; limit: number }) =>
      db.selectFrom('users').select(['id', 'username']).where('id', '>', p.afterId).orderBy('id').limit(p.limit),
    );
    expect(await namesAfter.all({ afterId: 0, limit: 2 })).toEqual([
      { id: 1, username: 'alice' },
      { id: 2, username: 'bob' },
    ]);
    expect(await namesAfter.all({ afterId: 2, limit: 2 })).toEqual([{ id: 3, username: 'carol' }]);
    expect(await namesAfter.first({ afterId: 3, limit: 1 })).toBeUndefined();

    const inGroup = prepareQuery(db, (p: { group: string }) =>
      db
        .selectFrom('userGroups')
        .select('userId')
        .where('groupName', '=', p.group)
        .where('userId', '<', 100)
        .orderBy('userId'),
    );
    expect(await inGroup.all({ group: 'users' })).toEqual([{ userId: 1 }, { userId: 2 }, { userId: 3 }]);
    expect(await inGroup.all({ group: 'sysops' })).toEqual([{ userId: 1 }]);
  });

  it('puts a parameter used twice in both places, and maps result columns to camelCase', async () => {
    const { db } = test.board;
    const sameId = prepareQuery(db, (p: { id: number }) =>
      db.selectFrom('users').select(['id', 'usernameKey']).where('id', '>=', p.id).where('id', '<=', p.id),
    );
    expect(await sameId.all({ id: 2 })).toEqual([{ id: 2, usernameKey: 'bob' }]);
  });

  it('runs inside a transaction it is given, seeing that transaction’s writes only there', async () => {
    const { db } = test.board;
    const addGroup = prepareQuery(db, (p: { userId: number; group: string }) =>
      db.insertInto('userGroups').values({ userId: p.userId, groupName: p.group }),
    );
    const groupsOf = prepareQuery(db, (p: { userId: number }) =>
      db.selectFrom('userGroups').select('groupName').where('userId', '=', p.userId).orderBy('groupName'),
    );
    await expect(
      db.transaction().execute(async (trx) => {
        expect(await addGroup.run({ userId: 3, group: 'guests' }, trx)).toBe(1);
        expect(await groupsOf.all({ userId: 3 }, trx)).toEqual([{ groupName: 'guests' }, { groupName: 'users' }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await groupsOf.all({ userId: 3 })).toEqual([{ groupName: 'users' }]);
  });

  it('refuses a call that leaves a parameter out, before touching the database', async () => {
    const { db } = test.board;
    const byName = prepareQuery(db, (p: { name: string }) =>
      db.selectFrom('users').select('id').where('username', '=', p.name),
    );
    await expect(byName.all({} as { name: string })).rejects.toThrow('no value for parameter "name"');
  });

  if (dialect === 'postgres') {
    it('runs as a named prepared statement on PostgreSQL, ad-hoc queries unnamed', async () => {
      const { db } = test.board;
      const byName = prepareQuery(db, (p: { name: string }) =>
        db.selectFrom('users').select('id').where('username', '=', p.name),
      );
      await byName.first({ name: 'alice' });
      await db.selectFrom('users').select('username').where('id', '=', 1).execute();
      // poolSize 1: this runs on the connection that ran both queries above.
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
      const statements = rows.map((row) => row.statement);
      expect(statements.some((text) => text.includes('"username" = $1'))).toBe(true);
      expect(statements.some((text) => text.includes('"id" = $1') && text.includes('select "username"'))).toBe(false);
    });
  }
});

describe('prepared queries and the SQLite statement cache', () => {
  it('gives the same answers as ad-hoc queries after many distinct statements passed through', async () => {
    const test = await createTestBoard('sqlite');
    try {
      const { db } = test.board;
      await test.board.credentials.createAccount({
        username: 'dave',
        password: 'correct horse battery',
        groups: ['users'],
      });
      // More distinct statements than the cache keeps: evicted ones are prepared again.
      for (let size = 1; size <= 600; size += 1) {
        const ids = Array.from({ length: size }, (_, index) => index + 1);
        const rows = await db.selectFrom('users').select('username').where('id', 'in', ids).execute();
        expect(rows).toEqual([{ username: 'dave' }]);
      }
      expect(await db.selectFrom('users').select('username').where('id', 'in', [1]).execute()).toEqual([
        { username: 'dave' },
      ]);
    } finally {
      await test.close();
    }
  });
});
