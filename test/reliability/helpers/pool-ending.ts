/**
 * The scenario every engine's "left running past its call" test walks: a call times out while its
 * server session runs on; that session keeps its place in the pool and in its caller's share until
 * the server has ended it, another session's call is answered meanwhile, and the caller's next call
 * runs once the place is back.
 */
import { expect } from 'vitest';
import { asCheckOwner } from '../../../daemon/policy/check-owner.js';
import type { Pool } from '../../../daemon/pools/pool.js';

/** A call through `pool` owned by `session`, as the MCP session's calls are (check-owner.ts). */
export const callAs =
  (pool: () => Pool) =>
  (session: string, sql: string, timeoutMs = 5000) =>
    asCheckOwner(session, () => pool().use((c) => c.execute(sql, [], { maxRows: 10, timeoutMs, readOnly: true })));

export interface EndingScenario {
  readonly pool: Pool;
  readonly run: ReturnType<typeof callAs>;
  /** A statement the server does not stop for seconds after a cancel or kill. */
  readonly statement: string;
  readonly timeoutMs: number;
  /** The server sessions still running `statement`, as the server reports them. */
  readonly stuck: () => Promise<readonly unknown[]>;
  /** How many server sessions the pool holds, as the server reports them (where it can tell). */
  readonly serverSessions?: () => Promise<number>;
}

export async function expectPlaceKeptUntilGone(s: EndingScenario): Promise<void> {
  await expect(s.run('a', s.statement, s.timeoutMs)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
  // The statement outlives its call: the server still runs it.
  const left = await s.stuck();
  expect(left).toHaveLength(1);
  expect(s.pool.endingCount).toBe(1);

  // The session's share (1 of 2) is the server session its call left: its next call waits for it.
  let ran = false;
  const next = s.run('a', 'SELECT 3 AS three').finally(() => {
    ran = true;
  });
  // Another session gets the one place left; the pool never has more server sessions than its size.
  await expect(s.run('b', 'SELECT 2 AS two')).resolves.toMatchObject({ rows: [{ two: 2 }] });
  expect(await s.stuck()).toEqual(left);
  if (s.serverSessions) expect(await s.serverSessions()).toBeLessThanOrEqual(2);
  expect(ran).toBe(false);

  // Once the server has ended it, the place is back and the waiting call runs.
  await expect(next).resolves.toMatchObject({ rows: [{ three: 3 }] });
  expect(s.pool.endingCount).toBe(0);
  expect(await s.stuck()).toEqual([]);
}
