import { describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { type ShimHandle, textOf } from '../helpers/mcp-client.js';
import { twoSessionsPerTest } from '../helpers/two-sessions.js';

const available = await serverAvailable('postgres');

/** A read that runs until it is cancelled (or the 30 s statement timeout). */
const SLOW = 'SELECT count(*) FROM generate_series(1, 10000000000)';

/** SQL text nested four deep in query_to_xml, 40 000 constants at the core: a statement whose check costs about a second. */
function costlyCheck(constants = 40_000, depth = 4): string {
  let sql = `SELECT ${Array(constants).fill('1').join(',')}`;
  for (let i = 0; i < depth; i++) sql = `SELECT query_to_xml('${sql.replaceAll("'", "''")}', true, true, '')`;
  return sql;
}

describe.skipIf(!available)('one MCP session cannot starve the others (relays over stdio, real daemon, PostgreSQL)', () => {
  const sessions = twoSessionsPerTest();
  const { slowCall } = sessions;

  async function twoSessions(config: object): Promise<[ShimHandle, ShimHandle]> {
    const { a, b } = await sessions.open(config, async (home) => {
      await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
      return 'pg';
    });
    return [a, b];
  }

  it('a session holds at most half the pool: its extra calls wait, then are refused naming the limit, and another session is answered', async () => {
    // Pool of 2: one call per session runs by default, two more may wait. Before the limit, this
    // session took both connections and the other waited for the pool, then got POOL_EXHAUSTED.
    const [a, b] = await twoSessions({ pool: { max: 2, acquireTimeoutMillis: 3000 } });
    const calls = Array.from({ length: 4 }, () => slowCall(a, SLOW));
    const first = await Promise.race(calls);
    expect(first.isError).toBe(true);
    expect(textOf(first)).toContain('TOO_MANY_CALLS');
    expect(textOf(first)).toContain('1 calls running and 2 waiting, the limit per session (perSession.maxConcurrentCalls in config.json');
    const other = await b.call('run_query', { sql: 'SELECT 42 AS answer' });
    expect(other.isError).toBeFalsy();
    expect(other.structuredContent).toMatchObject({ rows: [{ answer: 42 }] });
  });

  it('perSession.maxConcurrentCalls in config.json sets the limit', async () => {
    const [a] = await twoSessions({ perSession: { maxConcurrentCalls: 2 } });
    const calls = Array.from({ length: 7 }, () => slowCall(a, SLOW));
    const first = await Promise.race(calls);
    expect(textOf(first)).toContain('2 calls running and 4 waiting, the limit per session');
  });

  it("a session flooding the statement check with costly statements does not hold up another session's long statement", async () => {
    const [a, b] = await twoSessions({});
    const bomb = costlyCheck();
    const flood = Array.from({ length: 30 }, () => slowCall(a, bomb));
    // Wait until the flood is in: the calls over the session's limit (5 running, 10 waiting) are refused at once.
    const refused = await Promise.race(flood);
    expect(textOf(refused)).toContain('TOO_MANY_CALLS');
    const legit = `SELECT 1 AS one WHERE '${'z'.repeat(1500)}' <> ''`;
    const started = Date.now();
    const answer = await b.call('run_query', { sql: legit });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toMatchObject({ rows: [{ one: 1 }] });
    // A stall bound, not a speed: behind 30 checks of about a second each, this waited 30 s and more.
    expect(Date.now() - started).toBeLessThan(10_000);
    const results = await Promise.all(flood);
    // Every costly statement is answered: refused by the session limit, the check's deadline, or the server.
    expect(results.every((r) => r.isError)).toBe(true);
  }, 120_000);
});
