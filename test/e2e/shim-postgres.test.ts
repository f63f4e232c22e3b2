import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { runShimSuite } from './shim-suite.js';

const available = await serverAvailable('postgres');
const table = `hanactl_e2e_${process.pid}_${Date.now()}`;

describe.skipIf(!available)('the shim over stdio, on PostgreSQL, through a real daemon', () => {
  const home = new TestHome();
  let shim: ShimHandle;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(
      `CREATE TABLE ${table} (id int PRIMARY KEY, label text, amount numeric(30,10), big bigint, at timestamptz, flag boolean, raw bytea)`,
    );
    await admin.query(
      `INSERT INTO ${table} VALUES (1, 'ünïcødé ✓', 12345678901234567890.0123456789, 9007199254740993, '2024-05-01T12:00:00Z', true, '\\xdeadbeef'), (2, NULL, 0, 1, NULL, false, NULL)`,
    );
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    await home.ok(['add', '--no-test', 'pg-rw', PG_URL, '--no-password', '--allow-write']);
    shim = await startShim(home.env, ['--connection', 'pg']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await admin?.query(`DROP TABLE IF EXISTS ${table}`);
    await admin?.end();
  });

  runShimSuite({
    shim: () => shim,
    table,
    placeholder: (i) => `$${i}`,
    manyRows: 'SELECT g AS n FROM generate_series(1, 100000) g',
    labelled: async (label) => (await admin.query(`SELECT count(*)::int AS n FROM ${table} WHERE label = $1`, [label])).rows[0].n,
    missingTable: /42P01/,
  });

  it('maps PostgreSQL types to JSON without loss', async () => {
    const result = await shim.call('run_query', { sql: `SELECT * FROM ${table} ORDER BY id` });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      rowCount: 2,
      rows: [
        {
          id: 1,
          label: 'ünïcødé ✓',
          amount: '12345678901234567890.0123456789',
          big: '9007199254740993',
          at: '2024-05-01T12:00:00.000Z',
          flag: true,
          raw: '\\xdeadbeef',
        },
        { id: 2, label: null, big: 1, at: null, flag: false, raw: null },
      ],
    });
  });

  it('never commits a read call, even a function with side effects', async () => {
    // nextval is allowed by the engine in a read-only transaction only for temp sequences; a
    // data-modifying CTE is refused outright by the read-only transaction.
    const result = await shim.call('run_query', { sql: `WITH d AS (DELETE FROM ${table} RETURNING *) SELECT count(*) FROM d` });
    expect(result.isError).toBe(true);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(rows[0].n).toBe(2);
  });

  it('commits writes only on a connection a person marked writable', async () => {
    const result = await shim.call('run_query', { sql: `UPDATE ${table} SET label = 'written' WHERE id = 2`, connection: 'pg-rw' });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/1 row\(s\) affected/);
    const { rows } = await admin.query(`SELECT label FROM ${table} WHERE id = 2`);
    expect(rows[0].label).toBe('written');
  });

  it('keeps run_query annotations in line with the active connection’s write policy', async () => {
    const annotations = async () => (await shim.client.listTools()).tools.find((t) => t.name === 'run_query')?.annotations;
    expect(await annotations()).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    await shim.call('use_connection', { name: 'pg-rw' });
    expect(await annotations()).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    await shim.call('use_connection', { name: 'pg' });
    expect(await annotations()).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('reuses warm connections instead of opening one per call', async () => {
    for (let i = 0; i < 10; i++) await shim.call('run_query', { sql: 'SELECT 1' });
    await shim.call('run_query', { sql: 'SELECT * FROM missing_table_for_reset' });
    for (let i = 0; i < 5; i++) await shim.call('run_query', { sql: 'SELECT 1' });
    const { pools } = JSON.parse((await home.ok(['pools', '--json'])).stdout);
    const pool = pools.find((p: { connections: string[] }) => p.connections.includes('pg'));
    expect(pool.created).toBeLessThanOrEqual(2);
    expect(pool.destroyed).toBe(0);
  });

  it('shares one pool between two names for the same target', async () => {
    await home.ok(['add', '--no-test', 'pg-alias', PG_URL, '--no-password']);
    await shim.call('run_query', { sql: 'SELECT 1', connection: 'pg-alias' });
    const { pools } = JSON.parse((await home.ok(['pools', '--json'])).stdout);
    const shared = pools.find((p: { connections: string[] }) => p.connections.includes('pg-alias'));
    expect(shared.connections).toEqual(expect.arrayContaining(['pg', 'pg-alias']));
  });
});
