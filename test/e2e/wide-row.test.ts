import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const pgUp = await serverAvailable('postgres');
const mysqlUp = await serverAvailable('mysql');

/** One row too wide to read, per engine; the server builds it, the daemon must never read it whole. */
const CASES: readonly (readonly [string, string, string, boolean])[] = [
  ['pg', 'a 20 MB text cell', "SELECT repeat('x', 20000000) AS a", pgUp],
  ['pg', 'a 10 MB bytea cell (sent as 20 M hex characters)', "SELECT decode(repeat('00', 10000000), 'hex') AS b", pgUp],
  ['pg', "a 600 MB text cell, over V8's longest string", "SELECT repeat('x', 600000000) AS big", pgUp],
  ['pg', 'a row of two 10 MB cells', "SELECT repeat('x', 10000000) AS a, repeat('y', 10000000) AS b", pgUp],
  // Each value is under the server's max_allowed_packet (16 MB here); the row is not.
  ['my', 'a row of two 10 MB cells', "SELECT repeat('x', 10000000) AS a, repeat('y', 10000000) AS b", mysqlUp],
];

describe('a row too wide to read fails its call, never the daemon', () => {
  const home = new TestHome();
  let shim: ShimHandle;
  let pid: number;

  const daemonPid = async (): Promise<number> => JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout).pid;

  beforeAll(async () => {
    if (pgUp) await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    if (mysqlUp) await home.ok(['add', '--no-test', 'my', MYSQL_URL, '--no-password']);
    writeFileSync(join(home.dir, 'lite.db'), '');
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'lite.db')}`]);
    shim = await startShim(home.env);
    pid = await daemonPid();
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  for (const [connection, what, sql, up] of CASES)
    it.skipIf(!up)(
      `${connection}: ${what} is refused with the limit named; the next call runs on the same daemon`,
      async () => {
        const result = await shim.call('run_query', { sql, connection });
        expect(result.isError, textOf(result)).toBe(true);
        expect(textOf(result)).toMatch(/^QUERY_FAILED: .* sent a row \(or message\).*over the 16 MiB hanactl reads of one row/);
        expect(textOf(result)).toContain('the connection was given up');
        const next = await shim.call('run_query', { sql: 'SELECT 1 AS one', connection });
        expect(next.isError, textOf(next)).toBeFalsy();
        expect(next.structuredContent).toMatchObject({ rows: [{ one: 1 }] });
        expect(await daemonPid()).toBe(pid);
      },
      120_000,
    );

  it.skipIf(!pgUp)('pg: a wide row under the limit is still read, and its cell cut to fit', async () => {
    const result = await shim.call('run_query', { sql: "SELECT repeat('x', 10000000) AS a", connection: 'pg' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rowCount: 1 });
  });

  it('lite: a 400 MB blob fails in its SQLite host; the daemon is unharmed', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT zeroblob(400000000) AS b', connection: 'lite' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/^QUERY_FAILED: /);
    const next = await shim.call('run_query', { sql: 'SELECT 1 AS one', connection: 'lite' });
    expect(next.structuredContent).toMatchObject({ rows: [{ one: 1 }] });
    expect(await daemonPid()).toBe(pid);
  }, 120_000);
});
