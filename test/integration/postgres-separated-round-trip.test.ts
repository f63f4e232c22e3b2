/**
 * Where rows are separated, a call runs as the login (the role reset, `row_security = on`, the
 * role checked before and after the statement) and sets and reads back its context values, all in
 * the one pipelined batch a plain call sends: the server is reached once per call. Counted by a
 * TCP relay between the driver and PostgreSQL: the client speaking after the server has answered
 * (or first on a connection) starts a round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteOptions } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { type CountingRelay, countingRelay } from '../../scripts/bench/lib/counting-relay.mjs';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('PostgreSQL: a call whose rows are separated', () => {
  let relay: CountingRelay;
  let pool: Pool;

  beforeAll(async () => {
    relay = await countingRelay(PG_URL);
    const { target, password } = parseConnectionUrl(relay.url);
    const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
    pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 1 }, 'test');
  });

  afterAll(async () => {
    await pool?.end();
    await relay?.close();
  });

  async function call(sql: string, options: Partial<ExecuteOptions>) {
    const lease = await pool.acquire();
    let failure: unknown;
    try {
      return await lease.connection.execute(sql, [], { maxRows: 100, timeoutMs: 10_000, readOnly: true, ...options });
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      lease.release(failure);
    }
  }

  it('reaches the server once, as a plain call does, with the role reset and checks in that round trip', async () => {
    const separated = { separated: true, context: { CUSTOMER_ID: '42' } };
    const query = "SELECT current_user = session_user AS as_login, current_setting('mcp.customer_id', true) AS customer";
    await call('SELECT 1', {}); // the connection is open and warm
    relay.take();

    const plain = await call('SELECT 1 AS one', {});
    const plainTrips = relay.take();
    expect(plain.rows).toEqual([{ one: 1 }]);
    expect(plainTrips.roundTrips).toBe(1);

    const result = await call(query, separated);
    const trips = relay.take();
    expect(result.rows).toEqual([{ as_login: true, customer: '42' }]);
    expect(trips.roundTrips).toBe(1);
    expect(trips.sent).toContain('SET LOCAL SESSION AUTHORIZATION DEFAULT');
    expect(trips.sent).toContain('SET LOCAL ROLE NONE');
    expect(trips.sent).toContain('SET LOCAL row_security = on');
  });
});
