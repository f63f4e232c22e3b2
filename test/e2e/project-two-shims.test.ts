import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { capSqliteProject, fixtureRoot, json, sqlite, writeTree } from '../helpers/project-fixtures.js';
import { type RootsShimHandle, startRootsShim } from '../helpers/roots-client.js';

const base = fixtureRoot();
const home = new TestHome({ extraEnv: { HOME: join(base.dir, 'home') } });
const left = writeTree(join(base.dir, 'left'), capSqliteProject('left'));
const right = writeTree(join(base.dir, 'right'), {
  'package.json': json({ name: 'right' }),
  '.env': 'DATABASE_URL=sqlite:./right.db\n',
  'right.db': sqlite("CREATE TABLE books (title TEXT); INSERT INTO books VALUES ('book of right');"),
});

describe('two editors in two projects at the same time', () => {
  let a: RootsShimHandle;
  let b: RootsShimHandle;

  beforeAll(async () => {
    await home.ok(['trust', base.dir]);
    [a, b] = await Promise.all([
      startRootsShim(home.env, { roots: [left], clientName: 'editor-left' }),
      startRootsShim(home.env, { roots: [right], clientName: 'editor-right' }),
    ]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await home.dispose();
    base.dispose();
  });

  it('each gets its own project database, interleaved call by call', async () => {
    const ask = (shim: RootsShimHandle) => shim.call('run_query', { sql: 'SELECT title FROM books' });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(i % 2 === 0 ? a : b)));
    results.forEach((r, i) => {
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ rows: [{ title: i % 2 === 0 ? 'book of left' : 'book of right' }] });
    });
    expect((await a.call('current_connection')).structuredContent).toMatchObject({ active: 'project:db' });
    expect((await b.call('current_connection')).structuredContent).toMatchObject({ active: 'project:database' });
  });

  it('one switching project leaves the other where it is', async () => {
    await a.setRoots([right]);
    const [fromA, fromB] = await Promise.all([
      a.call('run_query', { sql: 'SELECT title FROM books' }),
      b.call('run_query', { sql: 'SELECT title FROM books' }),
    ]);
    expect(fromA.structuredContent).toMatchObject({ rows: [{ title: 'book of right' }] });
    expect(fromB.structuredContent).toMatchObject({ rows: [{ title: 'book of right' }] });
    await a.setRoots([left]);
    expect((await a.call('run_query', { sql: 'SELECT title FROM books' })).structuredContent).toMatchObject({
      rows: [{ title: 'book of left' }],
    });
    expect((await b.call('current_connection')).structuredContent).toMatchObject({ active: 'project:database' });
  });

  it('shares one pool per database file across sessions', async () => {
    const { pools } = JSON.parse((await home.ok(['pools', '--json'])).stdout);
    const targets = pools.map((p: { target: string }) => p.target).sort();
    expect(targets).toEqual([`sqlite:${join(left, 'db.sqlite')}`, `sqlite:${join(right, 'right.db')}`]);
  });
});
