import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PoolListSchema } from '../../shared/schemas.js';
import type { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { twoSessionsPerTest } from '../helpers/two-sessions.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

/** A read that runs until the statement timeout ends it, or the daemon stops. */
const SLOW = 'WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s) SELECT count(*) AS n FROM s';

/**
 * The SQLite pool has 4 connections while the daemon's pool setting is 10: a session's share must
 * come from the pool its calls borrow from. Before, one session's 5 calls (half of 10) took all 4
 * connections and another session waited, then got POOL_EXHAUSTED.
 */
describe('one session never holds every connection of the pool it uses (relays over stdio, real daemon, SQLite)', () => {
  const { open, slowCall } = twoSessionsPerTest();

  /** The pool of connection `name` as `hanactl pools` shows it. */
  const poolOf = async (h: TestHome, name: string) =>
    PoolListSchema.parse(JSON.parse((await h.ok(['pools', '--json'])).stdout)).pools.find((p) => p.connections.includes(name));

  it("a session's slow statements leave a connection of the SQLite pool for another session", async () => {
    const { home, a, b } = await open({ pool: { acquireTimeoutMillis: 2000 } }, async (home) => {
      const file = join(home.dir, 'lite.db');
      const db = new Database(file);
      db.exec('CREATE TABLE t (n INTEGER)');
      db.close();
      await home.ok(['add', '--no-test', 'lite', `sqlite:${file}`]);
      return 'lite';
    });

    const slow = Array.from({ length: 6 }, () => slowCall(a, SLOW));
    for (const call of slow) call.catch(() => {});
    // Wait until the flooding session holds every connection it may: its share of the pool, or
    // (without a share) the whole pool.
    for (;;) {
      const pool = await poolOf(home, 'lite');
      if (pool && pool.inUse > 0 && pool.inUse === (pool.perSession ?? pool.max)) break;
    }
    const other = await b.call('run_query', { sql: 'SELECT 42 AS answer' });
    expect(textOf(other)).not.toContain('POOL_EXHAUSTED');
    expect(other.isError).toBeFalsy();
    expect(other.structuredContent).toMatchObject({ rows: [{ answer: 42 }] });
    const pool = await poolOf(home, 'lite');
    expect(pool?.max).toBe(4);
    expect(pool?.perSession).toBe(2);
  }, 60_000);
});
