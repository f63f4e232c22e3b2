import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const pgUp = await serverAvailable('postgres');
const mysqlUp = await serverAvailable('mysql');

/** A function that fails the statement that calls it: a statement that ran says so in its error. */
const RAN = `hanactl_cost_ran_${randomBytes(4).toString('hex')}`;
/** A cross join of 10^10 rows: PostgreSQL plans it at a cost near 10^8, and it would run for hours. */
const EXPENSIVE = `SELECT ${RAN}() FROM generate_series(1, 100000) a, generate_series(1, 100000) b`;

describe.skipIf(!pgUp)('the cost guard on PostgreSQL, through the real shim and daemon', () => {
  const home = new TestHome();
  let admin: pg.Client;
  let shim: ShimHandle;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(
      `CREATE FUNCTION ${RAN}() RETURNS int VOLATILE LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the statement ran'; END $$`,
    );
    // No context names: a cost limit and row separation do not go together (see the last test).
    await home.ok(['add', 'pg', PG_URL, '--no-password']);
    shim = await startShim(home.env, ['--connection', 'pg']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await admin?.query(`DROP FUNCTION IF EXISTS ${RAN}()`);
    await admin?.end();
  });

  it('is set by a person and shown by hanactl set and list', async () => {
    const set = await home.ok(['set', 'pg', '--max-cost', '1000']);
    expect(set.stdout).toMatch(/"pg" is now read-only, .*reads over plan cost 1000 refused\./);
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections[0].maxCost).toBe(1000);
    // The agent is told too, before it writes a statement.
    const current = await shim.call('current_connection');
    expect(textOf(current)).toMatch(/reads whose plan costs more than 1000 are refused unrun/);
    expect(current.structuredContent).toMatchObject({ active: 'pg', maxCost: 1000 });
  });

  it('lets a cheap read run, with bound parameters', async () => {
    const result = await shim.call('run_query', {
      sql: 'SELECT $1::int + 1 AS answer',
      params: [41],
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ answer: 42 }], rowCount: 1 });
  });

  it('runs a statement that calls the marker function when its plan is cheap (the marker works)', async () => {
    const result = await shim.call('run_query', { sql: `SELECT ${RAN}()` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/the statement ran/);
  });

  it('refuses an expensive read with the estimate, the limit and advice; the statement never runs', async () => {
    const started = performance.now();
    const result = await shim.call('run_query', { sql: EXPENSIVE });
    const text = textOf(result);
    expect(result.isError).toBe(true);
    expect(text).toMatch(
      /the planner estimates this statement at cost \d+(\.\d+)?, over the limit of 1000 set for "pg"\. It was not run\./,
    );
    expect(text).toMatch(/WHERE.*LIMIT/);
    expect(text).toMatch(/set pg --max-cost <n>/);
    expect(text).not.toMatch(/the statement ran/);
    // Not running either: no backend shows it.
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
      [RAN],
    );
    expect(rows[0].n).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    // The connection stays usable.
    const next = await shim.call('run_query', { sql: 'SELECT 7 AS customer' });
    expect(next.structuredContent).toMatchObject({ rows: [{ customer: 7 }] });
  });

  it("reports a read the planner rejects with the database's own error, and the next call runs", async () => {
    const result = await shim.call('run_query', { sql: 'SELECT no_such_column FROM pg_catalog.pg_class' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/column "no_such_column" does not exist/);
    const next = await shim.call('run_query', { sql: 'SELECT 7 AS customer' });
    expect(next.structuredContent).toMatchObject({ rows: [{ customer: 7 }] });
  });

  it('lets statements PostgreSQL cannot EXPLAIN pass without an estimate', async () => {
    const result = await shim.call('run_query', { sql: 'SHOW server_version' });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { rowCount: number }).rowCount).toBe(1);
  });

  it('guards curated tools as it guards run_query', async () => {
    const file = join(home.dir, 'tools.yaml');
    writeFileSync(
      file,
      `tools:\n  - name: everything_twice\n    description: A cross join.\n    sql: ${EXPENSIVE} WHERE a.a > :n\n    parameters:\n      - {name: n, type: integer}\n`,
    );
    await home.ok(['tools', 'import', 'pg', file]);
    const result = await shim.call('everything_twice', { n: 0 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/over the limit of 1000 set for "pg"\. It was not run\./);
  });

  it('is cleared with --no-max-cost (and --max-cost none): the same statement then runs', async () => {
    await home.ok(['set', 'pg', '--no-max-cost']);
    expect(JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0].maxCost).toBeUndefined();
    const result = await shim.call('run_query', { sql: EXPENSIVE });
    expect(textOf(result)).toMatch(/the statement ran/);
    await home.ok(['set', 'pg', '--max-cost', '5']);
    await home.ok(['set', 'pg', '--max-cost', 'none']);
    expect(JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0].maxCost).toBeUndefined();
  });

  it('refuses a limit that is not a positive number', async () => {
    const result = await home.run(['set', 'pg', '--max-cost', '-3']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/use a positive number/);
  });
});

describe('the cost guard where the engine gives no estimate', () => {
  const home = new TestHome();

  afterAll(async () => {
    await home.dispose();
  });

  it('refuses --max-cost on SQLite, saying why', async () => {
    await home.ok(['add', 'lite', `sqlite:${join(home.dir, 'lite.db')}`, '--no-test']);
    const result = await home.run(['set', 'lite', '--max-cost', '100']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/SQLite has no cost estimate: EXPLAIN QUERY PLAN gives only the plan’s shape/);
    expect(JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0].maxCost).toBeUndefined();
  });

  it.skipIf(!mysqlUp)('refuses --max-cost on MariaDB before 11.0, naming the version', async () => {
    await home.ok(['add', 'maria', MYSQL_URL, '--no-password']);
    const result = await home.run(['set', 'maria', '--max-cost', '100']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/MariaDB gives no plan cost before 11\.0 \(EXPLAIN FORMAT=JSON has no query cost on 10\.\d+\.\d+\)/);
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections.find((c: { name: string }) => c.name === 'maria').maxCost).toBeUndefined();
  });

  it.skipIf(!mysqlUp || !pgUp)('refuses reads on a MariaDB 10 connection that kept a limit across --replace; SHOW still runs', async () => {
    await home.ok(['add', 'swap', PG_URL, '--no-password']);
    await home.ok(['set', 'swap', '--max-cost', '1000']);
    await home.ok(['add', 'swap', MYSQL_URL, '--no-password', '--replace']);
    const shim = await startShim(home.env, ['--connection', 'swap']);
    try {
      const read = await shim.call('run_query', { sql: 'SELECT ? + 1 AS answer', params: [41] });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/"swap" has a cost limit of 1000, but MariaDB gives no plan cost before 11\.0.*set swap --no-max-cost/);
      const show = await shim.call('run_query', { sql: 'SHOW VARIABLES LIKE "version"' });
      expect(show.isError).toBeFalsy();
      await home.ok(['set', 'swap', '--no-max-cost']);
      const again = await shim.call('run_query', { sql: 'SELECT ? + 1 AS answer', params: [41] });
      expect(again.structuredContent).toMatchObject({ rows: [{ answer: 42 }] });
    } finally {
      await shim.close();
    }
  });

  it.skipIf(!pgUp)('refuses reads on a SQLite connection that kept a limit across --replace', async () => {
    await home.ok(['add', 'flip', PG_URL, '--no-password']);
    await home.ok(['set', 'flip', '--max-cost', '1000']);
    await home.ok(['add', 'flip', `sqlite:${join(home.dir, 'lite.db')}`, '--no-test', '--replace']);
    const shim = await startShim(home.env, ['--connection', 'flip']);
    try {
      const read = await shim.call('run_query', { sql: 'SELECT 1' });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/"flip" has a cost limit of 1000, but SQLite has no cost estimate/);
    } finally {
      await shim.close();
    }
  });
});
