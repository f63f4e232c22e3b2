/**
 * hanactl through PgBouncer in transaction pooling mode: every transaction may land on another
 * server connection, shared with other clients. What hanactl promises must hold there too: reads
 * in a read-only transaction, each caller's context values for its own statement only, nothing
 * left behind in a server session, cancellation of the right statement, and signed context
 * values verified against the backend that runs the call.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endChildrenAfterEach } from '../helpers/children.js';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, textOf } from '../helpers/mcp-client.js';
import { PgBouncer, pgbouncerAvailable } from '../helpers/pgbouncer.js';
import { type CustomerShims, foreignRows, interleavedLeaks, RlsFixture, startCustomerShims } from '../helpers/rls-fixture.js';

const available = (await serverAvailable('postgres')) && pgbouncerAvailable();
endChildrenAfterEach();

/** A read that runs for minutes, CPU only; marked so pg_stat_activity finds it. */
const heavy = (mark: string) => `SELECT count(*) AS ${mark} FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b`;

describe.skipIf(!available)('through PgBouncer in transaction pooling mode', () => {
  const rls = new RlsFixture({ role: 'hctx_bouncer', table: 'bouncer_orders' });
  const home = new TestHome();
  const schema = `hctx_bouncer_${process.pid}_${randomBytes(3).toString('hex')}`;
  let bouncer: PgBouncer;
  let shims: CustomerShims | undefined;

  /** Client backends of the fixture's role running a statement that contains `mark`. */
  const active = async (mark: string): Promise<number> => {
    const { rows } = await rls.admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND usename = $1 AND query LIKE '%' || $2 || '%'`,
      [rls.role, mark],
    );
    return rows[0].n;
  };

  /** Resolves once `what` holds, checking after each server round trip; fails past `timeoutMs`. */
  const until = async (what: () => Promise<boolean>, timeoutMs: number): Promise<void> => {
    const started = performance.now();
    while (!(await what())) if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
  };

  beforeAll(async () => {
    await rls.setUp();
    bouncer = await PgBouncer.start({ users: { [rls.role]: rls.password }, poolSize: 2 });
    const url = new URL(bouncer.url(rls.role));
    await home.ok(['add', 'shop', url.toString(), '--password-stdin', '--context', 'customer_id'], { input: rls.password });
  });

  afterAll(async () => {
    await shims?.close();
    await home.dispose();
    await bouncer?.stop();
    await rls.admin?.query(`DROP POLICY IF EXISTS by_signed ON ${rls.table}`).catch(() => {});
    await rls.admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await rls.dispose();
  });

  it('gives each of two customers only their own rows while they share two server connections, and leaves no value behind', async () => {
    shims = await startCustomerShims(home, 'shop');
    expect(await interleavedLeaks(shims.one, shims.two, rls.select, { rows: 5, batches: 10 })).toBe(0);
    // Another client of the same pooler, without hanactl, lands on the same server connections and sees nothing.
    const direct = new URL(bouncer.url(rls.role));
    direct.password = rls.password;
    const plain = new pg.Client({ connectionString: direct.toString() });
    await plain.connect();
    try {
      for (let i = 0; i < 6; i++) {
        const { rows } = await plain.query(
          `SELECT current_setting('mcp.customer_id', true) AS v, (${rls.select.replace('customer_id, item', 'count(*)')}) AS n`,
        );
        expect(rows[0]).toMatchObject({ n: '0' });
        expect(rows[0].v ?? '').toBe('');
      }
    } finally {
      await plain.end();
    }
  });

  it('reads in a read-only transaction and refuses a write', async () => {
    const one = shims?.one as ShimHandle;
    const ro = await one.call('run_query', { sql: "SELECT current_setting('transaction_read_only') AS ro" });
    expect(ro.structuredContent).toMatchObject({ rows: [{ ro: 'on' }] });
    const write = await one.call('run_query', { sql: `DELETE FROM ${rls.table}` });
    expect(write.isError).toBe(true);
    const { rows } = await rls.admin.query(`SELECT count(*)::int AS n FROM ${rls.table}`);
    expect(rows[0].n).toBe(15);
  });

  it('cancels the statement it runs, on the server, when the agent cancels', async () => {
    const one = shims?.one as ShimHandle;
    const mark = `bouncer_mark_${randomBytes(4).toString('hex')}`;
    const controller = new AbortController();
    const call = one.client.callTool({ name: 'run_query', arguments: { sql: heavy(mark) } }, undefined, { signal: controller.signal });
    call.catch(() => {});
    await until(async () => (await active(mark)) === 1, 10_000);
    controller.abort();
    await expect(call).rejects.toThrow();
    // Within seconds, far below the statement's own 30 s limit: the cancel reached it.
    await until(async () => (await active(mark)) === 0, 10_000);
    const after = (await one.call('run_query', { sql: 'SELECT 1 AS alive' })) as CallToolResult;
    expect(after.structuredContent, textOf(after)).toMatchObject({ rows: [{ alive: 1 }] });
  });

  it('verifies signed context values against the backend that runs the call', async () => {
    await home.ok(['set', 'shop', '--signed-context']);
    const sql = await home.ok(['context-sql', 'shop', '--schema', schema]);
    await rls.admin.query(sql.stdout);
    await rls.admin.query(`DROP POLICY by_customer ON ${rls.table}`);
    await rls.admin.query(`CREATE POLICY by_signed ON ${rls.table} USING (customer_id = (SELECT ${schema}.context('customer_id'))::int)`);
    const { one, two } = shims as CustomerShims;
    expect(foreignRows(await one.call('run_query', { sql: rls.select }), 1, { rows: 5 })).toBe(0);
    expect(await interleavedLeaks(one, two, rls.select, { rows: 5, batches: 5 })).toBe(0);
    // Through a view the call is resolved by the full walk: made again, on whichever backend the
    // pooler then gives it, with the values signed for that one.
    await rls.admin.query(`CREATE VIEW ${schema}.mine WITH (security_invoker = true) AS SELECT customer_id, item FROM ${rls.table}`);
    await rls.admin.query(`GRANT SELECT ON ${schema}.mine TO ${rls.role}`);
    expect(await interleavedLeaks(one, two, rls.select.replace(rls.table, `${schema}.mine`), { rows: 5, batches: 5 })).toBe(0);
    // Two hundred calls through the pooler, each signed and verified: a budget for a loaded machine, not a speed bound.
  }, 120_000);
});
