import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CancelResultSchema, PoolListSchema, RunningQueryListSchema } from '../../shared/schemas.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const POOL_MAX = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newMark = () => `cat_mark_${randomBytes(5).toString('hex')}`;

/**
 * Catalog calls are cancellable like run_query: a long sample_rows (a view that counts for
 * minutes) and a long explain_query (its planning waits on a lock) stop on the server when a
 * person runs `hanactl cancel <id>` and when the agent's MCP client cancels the tool call.
 */
describe.skipIf(!available)('cancelling sample_rows and explain_query on PostgreSQL, through the real shim and CLI', () => {
  const home = new TestHome();
  const views: string[] = [];
  const locked = `hanactl_locked_${process.pid}_${randomBytes(3).toString('hex')}`;
  let shim: ShimHandle;
  let admin: pg.Client;
  let locker: pg.Client;

  /** Client backends running a statement that contains `mark` right now (the admin's own excluded). */
  const active = async (mark: string): Promise<number> => {
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
      [mark],
    );
    return rows[0].n;
  };
  const until = async (what: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
    const started = performance.now();
    while (!(await what())) {
      if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
      await sleep(20);
    }
  };
  /** A view whose rows take minutes to count, CPU only; its name carries the mark. */
  const slowView = async (): Promise<string> => {
    const mark = newMark();
    await admin.query(
      `CREATE VIEW ${mark} AS SELECT count(*) AS n FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b`,
    );
    views.push(mark);
    return mark;
  };
  const running = async (tool: string) => {
    const { queries } = RunningQueryListSchema.parse(JSON.parse((await home.ok(['queries', '--json'])).stdout));
    return queries.filter((q) => q.tool === tool);
  };
  /** A person cancels the one running call of `tool`; the answer says it stopped. */
  const cancelByPerson = async (tool: string) => {
    const [call] = await running(tool);
    expect(call).toMatchObject({ connection: 'pg', client: 'catalog-cancel', tool, cancelling: false });
    const cancelled = CancelResultSchema.parse(JSON.parse((await home.ok(['cancel', call?.id ?? '', '--json'])).stdout));
    expect(cancelled).toEqual({ id: call?.id, cancelled: true, stopped: true });
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${locked} (id int)`);
    locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    // A small pool, so a cancelled call that leaked its connection would show at once.
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ pool: { max: POOL_MAX } }));
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    shim = await startShim(home.env, ['--connection', 'pg'], 'catalog-cancel');
  });

  afterEach(async () => {
    await locker?.query('ROLLBACK').catch(() => {});
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await locker?.end();
    for (const view of views) await admin?.query(`DROP VIEW IF EXISTS ${view}`);
    await admin?.query(`DROP TABLE IF EXISTS ${locked}`);
    await admin?.end();
  });

  it('`hanactl cancel` stops a long sample_rows on the server', async () => {
    const view = await slowView();
    const call = shim.call('sample_rows', { table: view });
    await until(async () => (await active(view)) === 1);
    await cancelByPerson('sample_rows');
    expect(await active(view)).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/QUERY_CANCELLED.*hanactl(?:\.js)? cancel/);
    expect(await running('sample_rows')).toEqual([]);
  });

  it('`hanactl cancel` stops an explain_query whose planning waits on a lock', async () => {
    const mark = newMark();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${locked} IN ACCESS EXCLUSIVE MODE`);
    const call = shim.call('explain_query', { sql: `SELECT id AS ${mark} FROM ${locked}` });
    await until(async () => (await active(mark)) === 1);
    await cancelByPerson('explain_query');
    expect(await active(mark)).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/QUERY_CANCELLED.*hanactl(?:\.js)? cancel/);
  });

  it('an MCP cancellation stops sample_rows and explain_query on the server, and frees their connections', async () => {
    for (let i = 0; i < POOL_MAX + 1; i++) {
      const view = await slowView();
      const controller = new AbortController();
      const call = shim.client.callTool({ name: 'sample_rows', arguments: { table: view } }, undefined, { signal: controller.signal });
      call.catch(() => {});
      await until(async () => (await active(view)) === 1);
      controller.abort();
      await expect(call).rejects.toThrow();
      // A stall bound, far below the 30 s statement timeout that would otherwise end it.
      await until(async () => (await active(view)) === 0, 5000);
    }
    const mark = newMark();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${locked} IN ACCESS EXCLUSIVE MODE`);
    const controller = new AbortController();
    const call = shim.client.callTool({ name: 'explain_query', arguments: { sql: `SELECT id AS ${mark} FROM ${locked}` } }, undefined, {
      signal: controller.signal,
    });
    call.catch(() => {});
    await until(async () => (await active(mark)) === 1);
    controller.abort();
    await expect(call).rejects.toThrow();
    await until(async () => (await active(mark)) === 0, 5000);
    await locker.query('ROLLBACK');

    // More cancellations than the pool has connections, and the pool still serves.
    const after = await shim.call('sample_rows', { table: locked });
    expect(after.isError).toBeFalsy();
    const { pools } = PoolListSchema.parse(JSON.parse((await home.ok(['pools', '--json'])).stdout));
    expect(pools[0]).toMatchObject({ inUse: 0, waiting: 0, max: POOL_MAX });
  });
});
