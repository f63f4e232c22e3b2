/**
 * A PostgreSQL call is one pipelined batch (RESET ALL, BEGIN, settings, statement, read-back, end,
 * cleanup, one Sync): the statement runs inside its transaction with its settings, and when a step
 * before it fails, the server skips it — it never runs, let alone outside its transaction.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');
const table = `hbatch_${process.pid}_${randomBytes(3).toString('hex')}`;

describe.skipIf(!available)('PostgreSQL: one batch per call', () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  let conn: DriverConnection;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE TABLE ${table} (n int)`);
    const { target } = parseConnectionUrl(PG_URL);
    conn = await (await loadDriverFactory('postgres'))(target, {}, { connectTimeoutMs: 5000 }).connect();
  });

  afterAll(async () => {
    await conn?.close();
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  });

  it('runs a read inside its read-only transaction, with its statement limit and context value', async () => {
    const r = await conn.execute(
      "SELECT current_setting('transaction_read_only') AS ro, current_setting('statement_timeout') AS limit, current_setting('mcp.customer_id') AS c, now() = statement_timestamp() AS later",
      [],
      { maxRows: 10, timeoutMs: 4321, readOnly: true, context: { CUSTOMER_ID: 'c-1' } },
    );
    expect(r.rows[0]).toEqual({ ro: 'on', limit: '4321ms', c: 'c-1', later: false });
  });

  it('does not run the statement when setting a context value fails before it', async () => {
    // PostgreSQL refuses a NUL byte in text: the settings step fails, the INSERT after it is skipped.
    await expect(
      conn.execute(`INSERT INTO ${table} VALUES (1)`, [], {
        maxRows: 1,
        timeoutMs: 5000,
        readOnly: false,
        context: { CUSTOMER_ID: 'a\u0000b' },
      }),
    ).rejects.toThrow();
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
    // The connection is usable for the next call, and a write without the fault commits.
    await conn.execute(`INSERT INTO ${table} VALUES (2)`, [], { maxRows: 1, timeoutMs: 5000, readOnly: false });
    expect((await admin.query(`SELECT array_agg(n) AS ns FROM ${table}`)).rows[0].ns).toEqual([2]);
  });

  it('returns the RETURNING rows of a committed write from the same batch', async () => {
    const r = await conn.execute(`INSERT INTO ${table} VALUES (3) RETURNING n`, [], { maxRows: 10, timeoutMs: 5000, readOnly: false });
    expect(r.rows).toEqual([{ n: 3 }]);
  });
});
