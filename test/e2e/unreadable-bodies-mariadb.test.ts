/**
 * Routine bodies the statement check's lexer cannot read whole, on MariaDB, through the real shim,
 * daemon and server. A quote inside an optimizer hint (`/*+ ' *\/`) is a plain comment to MariaDB
 * 10.x, but MySQL's hint scanner reads it as a literal running past the `*\/`: the lexer stops
 * there, and what follows it in the body would go unjudged. Such a body is refused on read-only
 * calls and on calls carrying context values, wherever the statement reaches it (directly, through
 * another function, through a view), naming the routine and the reason.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin, type SleepingSession, sleepingSession } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const db = MYSQL_TEST_DB;

describe.skipIf(!available)('a routine body no reading judges whole is refused where calls are judged', () => {
  const home = new TestHome();
  const reader = new MariadbLogin(`fxmyamb_${s}`);
  let root: mysql.Connection;
  let ro: ShimHandle;
  let ctx: ShimHandle;

  /** KILL QUERY behind a quote in a hint, each quote the hint scanner reads, and a hint in a versioned comment. */
  const killers: Record<string, string> = {
    [`kq_${s}`]: "/*+ ' */",
    [`kqd_${s}`]: '/*+ " */',
    [`kqb_${s}`]: '/*+ ` */',
    [`kqv_${s}`]: "/*!50000 /*+ ' */ */",
  };
  const functions: Record<string, string> = {
    ...Object.fromEntries(
      Object.entries(killers).map(([name, hint]) => [
        name,
        `(i BIGINT) RETURNS INT SQL SECURITY DEFINER BEGIN ${hint} KILL QUERY i; RETURN 1; END`,
      ]),
    ),
    // Plain KILL, judged and refused wherever it is reached.
    [`kill_${s}`]: '(i BIGINT) RETURNS INT SQL SECURITY DEFINER BEGIN KILL QUERY i; RETURN 1; END',
    // Created under sql_mode MSSQL: there [a'] is a name and the call follows the hint; every other reading puts it in a string.
    [`ms_${s}`]: `(i BIGINT) RETURNS INT SQL SECURITY DEFINER RETURN (SELECT k FROM (SELECT 1 [a'] /*+ \\' */, 1 [\\'], kill_${s}(i) AS k, 2 ['] FROM dual) AS d)`,
    [`wrap_${s}`]: `(i BIGINT) RETURNS INT SQL SECURITY INVOKER RETURN kq_${s}(i) + 0`,
    // A DEFINER function reading every customer's rows behind the hint.
    [`all_${s}`]: `() RETURNS INT SQL SECURITY DEFINER READS SQL DATA BEGIN /*+ ' */ RETURN (SELECT count(*) FROM o_${s}); END`,
    // What the server reads as this check does: a hint with no quote, a # comment a lone CR does not end.
    [`hint_${s}`]: '() RETURNS INT SQL SECURITY DEFINER BEGIN /*+ NO_RANGE_OPTIMIZATION(t) */ RETURN 7; END',
    [`cr_${s}`]: '(i BIGINT) RETURNS INT SQL SECURITY DEFINER BEGIN # a note\r KILL QUERY i;\n RETURN 2; END',
  };

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE vic_${s} (id BIGINT)`);
    await root.query(`CREATE TABLE o_${s} (customer_id INT, item VARCHAR(20))`);
    await root.query(`INSERT INTO o_${s} VALUES (1, 'a'), (1, 'b'), (2, 'c')`);
    for (const [name, rest] of Object.entries(functions)) {
      if (name.startsWith('ms_')) await root.query(`SET SESSION sql_mode = 'MSSQL'`);
      await root.query(`CREATE FUNCTION ${name}${rest}`);
      await root.query('SET SESSION sql_mode = DEFAULT');
    }
    await root.query(`CREATE SQL SECURITY DEFINER VIEW kv_${s} AS SELECT kq_${s}(id) AS k FROM vic_${s}`);
    await reader.create(root, [
      // The login reads routine bodies and the view's definition: what is refused here is what they hold.
      'SELECT ON mysql.proc',
      ...Object.keys(functions).map((name) => `EXECUTE ON FUNCTION ${db}.${name}`),
      `SELECT, SHOW VIEW ON ${db}.kv_${s}`,
      `SELECT ON ${db}.vic_${s}`,
    ]);
    const add = (name: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, reader.url({ withPassword: false }), '--password-stdin', ...more], { input: reader.password });
    await add('ro');
    await add('ctx', '--context', 'CUSTOMER_ID');
    ro = await startShim(home.env, ['--connection', 'ro']);
    ctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'ctx']);
  });

  afterAll(async () => {
    for (const shim of [ro, ctx]) await shim?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS kv_${s}`,
      ...Object.keys(functions).map((name) => `DROP FUNCTION IF EXISTS ${name}`),
      `DROP TABLE IF EXISTS vic_${s}`,
      `DROP TABLE IF EXISTS o_${s}`,
    ])
      await root?.query(sql).catch(() => {});
    await reader.drop(root);
    await root?.end();
  });

  /** A session of the server's own user running a long statement, seen running before this returns. */
  const victim = async (): Promise<SleepingSession> => sleepingSession(root, await openMariadbAdmin());

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    for (const part of parts) expect(textOf(result)).toMatch(part);
  };

  it('refuses a function that kills another session behind a quote in a hint, whatever the quote', async () => {
    const other = await victim();
    try {
      for (const name of Object.keys(killers))
        refused(
          await ro.call('run_query', { sql: `SELECT ${name}(${other.id}) AS k` }),
          new RegExp(`${name}\\(\\)`),
          /a quote inside an optimizer hint/,
          /cannot be judged/,
          /ambiguous-text/,
        );
      refused(
        await ro.call('run_query', { sql: `SELECT ms_${s}(${other.id}) AS k` }),
        new RegExp(`ms_${s}\\(\\)`),
        /a quote inside an optimizer hint/,
        /ambiguous-text/,
      );
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });

  it('refuses it at any depth: through another function and through a view', async () => {
    const other = await victim();
    try {
      await root.query(`INSERT INTO vic_${s} VALUES (?)`, [other.id]);
      refused(
        await ro.call('run_query', { sql: `SELECT wrap_${s}(${other.id}) AS k` }),
        new RegExp(`kq_${s}\\(\\) \\(reached through ${db}\\.wrap_${s}\\(\\)\\)`),
        /a quote inside an optimizer hint/,
      );
      refused(
        await ro.call('run_query', { sql: `SELECT k FROM kv_${s}` }),
        new RegExp(`reached through the view ${db}\\.kv_${s}`),
        /ambiguous-text/,
      );
      refused(await ro.call('sample_rows', { table: `kv_${s}` }), /a quote inside an optimizer hint/);
      expect(await other.running()).toBe(true);
    } finally {
      await root.query(`DELETE FROM vic_${s}`);
      await other.end();
    }
  });

  it('refuses a statement whose reading under sql_mode MSSQL stops at a quote in a hint, before a function it calls', async () => {
    // Every reading the statement check makes puts the call inside a string; under MSSQL, [a'] is a name and the call follows the hint.
    const sql = (name: string) => `SELECT 1 [a'] /*+ \\' */, 1 [\\'], ${name}(1) AS k, 2 ['] FROM dual`;
    for (const shim of [ro, ctx])
      refused(
        await shim.call('run_query', { sql: sql(`kq_${s}`) }),
        /sql_mode MSSQL/,
        /a quote inside an optimizer hint/,
        /ambiguous-text/,
      );
  });

  it("with context values: refuses a DEFINER function reading every customer's rows behind the hint", async () => {
    refused(
      await ctx.call('run_query', { sql: `SELECT all_${s}() AS n` }),
      new RegExp(`all_${s}\\(\\)`),
      /a quote inside an optimizer hint/,
      /ambiguous-text/,
    );
  });

  it('answers bodies the server reads as the check does: a hint with no quote, a # comment a lone CR does not end', async () => {
    const hint = await ro.call('run_query', { sql: `SELECT hint_${s}() AS v` });
    expect(hint.isError, textOf(hint)).toBeFalsy();
    expect((hint.structuredContent as { rows: { v: number }[] }).rows[0]?.v).toBe(7);
    const other = await victim();
    try {
      const cr = await ro.call('run_query', { sql: `SELECT cr_${s}(${other.id}) AS v` });
      expect(cr.isError, textOf(cr)).toBeFalsy();
      expect((cr.structuredContent as { rows: { v: number }[] }).rows[0]?.v).toBe(2);
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });
});
