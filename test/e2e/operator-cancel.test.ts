import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditListSchema, CancelResultSchema, PoolListSchema, RunningQueryListSchema } from '../../shared/schemas.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const POOL_MAX = 2;
const table = `hanactl_progress_${process.pid}_${Date.now()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A read that runs for minutes, CPU only (no temp files); pg_sleep is refused by the read-only validator. */
const heavy = (mark: string) => `SELECT count(*) AS ${mark} FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b`;
const newMark = () => `op_mark_${randomBytes(5).toString('hex')}`;

describe.skipIf(!available)('cancelling and watching statements on PostgreSQL, through the real shim and CLI', () => {
  const home = new TestHome();
  let shim: ShimHandle;
  let admin: pg.Client;

  /** Client backends running a statement that contains `mark` right now (the admin's own query excluded). */
  const active = async (mark: string): Promise<number> => {
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
      [mark],
    );
    return rows[0].n;
  };
  const until = async (what: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> => {
    const started = performance.now();
    while (!(await what())) {
      if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
      await sleep(20);
    }
    return performance.now() - started;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${table} (id int)`);
    await admin.query(`INSERT INTO ${table} VALUES (1), (2)`);
    // A small pool, so a cancelled statement that leaked its connection would show at once.
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ pool: { max: POOL_MAX } }));
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    shim = await startShim(home.env, ['--connection', 'pg'], 'cancel-client');
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await admin?.query(`DROP TABLE IF EXISTS ${table}`);
    await admin?.end();
  });

  it('an MCP cancellation stops the statement on the server within seconds, every time, and frees its connection', async () => {
    for (let i = 0; i < POOL_MAX + 2; i++) {
      const mark = newMark();
      const controller = new AbortController();
      const call = shim.client.callTool({ name: 'run_query', arguments: { sql: heavy(mark) } }, undefined, { signal: controller.signal });
      call.catch(() => {});
      await until(async () => (await active(mark)) === 1);
      await sleep(200);
      controller.abort();
      await expect(call).rejects.toThrow();
      const stoppedAfter = await until(async () => (await active(mark)) === 0, 5000);
      // A stall bound, not a speed figure: the cancel, repeated within a second and then the
      // abandoned connection's terminated backend, ends it in seconds, far below its 30 s limit.
      expect(stoppedAfter, `statement ${i} still ran ${Math.round(stoppedAfter)} ms after the cancel`).toBeLessThan(5000);
    }
    // More cancellations than the pool has connections, and the pool still serves.
    const after = (await shim.call('run_query', { sql: 'SELECT 1 AS alive' })) as CallToolResult;
    expect(after.structuredContent).toMatchObject({ rows: [{ alive: 1 }] });
    const { pools } = PoolListSchema.parse(JSON.parse((await home.ok(['pools', '--json'])).stdout));
    expect(pools[0]).toMatchObject({ inUse: 0, waiting: 0, max: POOL_MAX });
    const { records } = AuditListSchema.parse(JSON.parse((await home.ok(['audit', '--json', '--limit', '5'])).stdout));
    expect(records.slice(0, 4).map((r) => r.errorCode)).toEqual(Array(4).fill('QUERY_CANCELLED'));
  });

  it('`hanactl queries` lists a running statement and `hanactl cancel` stops it on the server', async () => {
    const mark = newMark();
    const sql = heavy(mark);
    const call = shim.call('run_query', { sql });
    await until(async () => (await active(mark)) === 1);
    const { queries } = RunningQueryListSchema.parse(JSON.parse((await home.ok(['queries', '--json'])).stdout));
    const running = queries.find((q) => q.sql.includes(mark));
    expect(running).toMatchObject({
      connection: 'pg',
      client: 'cancel-client',
      tool: 'run_query',
      sql: sql.slice(0, 200),
      cancelling: false,
    });
    expect(running?.ageMs).toBeGreaterThan(0);
    const table = (await home.ok(['queries'])).stdout;
    expect(table).toContain(running?.id);
    expect(table).toContain(mark);

    const started = performance.now();
    const cancelled = CancelResultSchema.parse(JSON.parse((await home.ok(['cancel', running?.id ?? '', '--json'])).stdout));
    expect(cancelled).toEqual({ id: running?.id, cancelled: true, stopped: true });
    expect(await active(mark)).toBe(0);
    expect(performance.now() - started).toBeLessThan(3000); // includes starting the CLI
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/QUERY_CANCELLED.*hanactl(?:\.js)? cancel/);
    expect(RunningQueryListSchema.parse(JSON.parse((await home.ok(['queries', '--json'])).stdout)).queries).toEqual([]);
    expect((await home.ok(['queries'])).stdout).toMatch(/No statements are running/);

    const unknown = await home.run(['cancel', running?.id ?? '']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/hanactl(?:\.js)? queries/);
  });

  it('sends progress notifications while a long call waits, when the client asked for them', async () => {
    await admin.query('BEGIN');
    await admin.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const progress: Progress[] = [];
    const call = shim.client.callTool({ name: 'run_query', arguments: { sql: `SELECT count(*)::int AS n FROM ${table}` } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    await sleep(2600);
    await admin.query('COMMIT');
    const result = (await call) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ rows: [{ n: 2 }] });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]?.message).toMatch(/still running \(1 s\)/);
    for (let i = 1; i < progress.length; i++) expect(progress[i]?.progress).toBeGreaterThan(progress[i - 1]?.progress ?? Infinity);
    // A quick call sends none.
    const quick: Progress[] = [];
    await shim.client.callTool({ name: 'run_query', arguments: { sql: 'SELECT 1' } }, undefined, { onprogress: (p) => quick.push(p) });
    expect(quick).toEqual([]);
  });
});
