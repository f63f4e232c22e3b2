/**
 * Stored routines on MariaDB, through the real shim, daemon and server: a read-only call runs the
 * stored functions it may EXECUTE inside its read-only transaction, which does not stop KILL, SET
 * GLOBAL or INTO OUTFILE in a routine, and a SQL SECURITY DEFINER one runs with its owner's
 * rights. hanactl reads each routine the statement reaches (directly, through another routine,
 * through a view) from the server's own records and judges its body before the statement runs.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { mariadbAccount } from '../helpers/mariadb-account.js';
import { type SleepingSession, sleepingSession } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const reader = `hrr_${s}`.slice(0, 32);
const hidden = `hrh_${s}`.slice(0, 32);
const password = randomBytes(12).toString('hex');
const dumpFile = `/tmp/hanactl_dump_${s}.txt`;

describe.skipIf(!available)('stored routines a statement reaches on MariaDB are judged before it runs', () => {
  const home = new TestHome();
  const u = new URL(MYSQL_URL);
  const db = u.pathname.slice(1);
  const admin = () =>
    mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), database: db });
  let root: mysql.Connection;
  let rd: ShimHandle;
  let rdctx: ShimHandle;
  let hid: ShimHandle;
  let hidctx: ShimHandle;
  let longQueryTime: string;

  const functions: Record<string, string> = {
    [`kq_${s}`]: `(i BIGINT) RETURNS INT SQL SECURITY DEFINER BEGIN KILL QUERY i; RETURN 1; END`,
    [`slow_${s}`]: `(secs DOUBLE) RETURNS DOUBLE SQL SECURITY DEFINER BEGIN SET GLOBAL long_query_time = secs; RETURN @@global.long_query_time; END`,
    [`dump_${s}`]: `() RETURNS INT SQL SECURITY DEFINER BEGIN SELECT 1 INTO OUTFILE '${dumpFile}'; RETURN 1; END`,
    [`wrap_${s}`]: `(i BIGINT) RETURNS INT SQL SECURITY DEFINER RETURN kq_${s}(i) + 0`,
    [`plus_${s}`]: `(x INT) RETURNS INT DETERMINISTIC SQL SECURITY DEFINER BEGIN DECLARE y INT DEFAULT 1; IF x > 0 THEN SET y = x + 1; END IF; RETURN y; END`,
    [`inv_${s}`]: `() RETURNS INT SQL SECURITY INVOKER READS SQL DATA RETURN (SELECT count(*) FROM t_${s})`,
    [`cnt_${s}`]: `() RETURNS INT SQL SECURITY DEFINER READS SQL DATA RETURN (SELECT count(*) FROM t_${s})`,
    [`wrapinv_${s}`]: `() RETURNS INT SQL SECURITY DEFINER RETURN inv_${s}() + 0`,
    [`stat_${s}`]: `() RETURNS BIGINT SQL SECURITY INVOKER READS SQL DATA RETURN (SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'HANDLER_READ_NEXT')`,
    // The context recipe's function (docs/context-parameters.md), made with the reader's account as DEFINER.
    [`cust_${s}`]: `() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    [`forge_${s}`]: `() RETURNS INT SQL SECURITY INVOKER BEGIN SET @mcp_customer_id = '2'; RETURN 1; END`,
    // Thin INVOKER wrappers around DEFINER functions, and an INVOKER KILL.
    [`wk_${s}`]: `(i BIGINT) RETURNS INT SQL SECURITY INVOKER RETURN kq_${s}(i)`,
    [`wc_${s}`]: `() RETURNS INT SQL SECURITY INVOKER READS SQL DATA RETURN cnt_${s}()`,
    // Created under NO_BACKSLASH_ESCAPES, as a Windows path needs: the server parses it that way.
    [`pk_${s}`]: `(i BIGINT) RETURNS VARCHAR(20) SQL SECURITY DEFINER BEGIN DECLARE d VARCHAR(20) DEFAULT 'C:\\'; KILL QUERY i; SET d = 'D:\\'; RETURN d; END`,
    [`stop_${s}`]: `(i BIGINT) RETURNS INT SQL SECURITY INVOKER BEGIN KILL QUERY i; RETURN 1; END`,
    // DEFAULT(col) evaluates the column's default, which may be NEXT VALUE FOR a sequence; here a constant.
    [`def_${s}`]: `() RETURNS BIGINT SQL SECURITY DEFINER READS SQL DATA RETURN (SELECT DEFAULT(b) FROM td_${s} LIMIT 1)`,
    // Session and user variables outlive the call; a local one does not.
    [`sm_${s}`]: `() RETURNS INT SQL SECURITY INVOKER BEGIN SET sql_mode = 'ANSI_QUOTES'; RETURN 1; END`,
    [`uv_${s}`]: `() RETURNS INT SQL SECURITY DEFINER BEGIN DECLARE v INT; SET v = 1, @uv_${s} = 2; RETURN v; END`,
    [`decl_${s}`]: `() RETURNS INT SQL SECURITY DEFINER BEGIN DECLARE x INT DEFAULT (2 + 3); RETURN x; END`,
    // A name declared in an inner block is the system variable outside it.
    [`sv1_${s}`]: `() RETURNS VARCHAR(300) SQL SECURITY INVOKER BEGIN BEGIN DECLARE sql_mode INT; END; SET sql_mode = 'ANSI_QUOTES'; RETURN @@sql_mode; END`,
    // An OUT argument assigns the user variable passed to it.
    [`fo_${s}`]: `() RETURNS VARCHAR(64) SQL SECURITY INVOKER BEGIN CALL pz_${s}(@q_${s}); RETURN COALESCE(@q_${s}, 'q is NULL'); END`,
  };

  beforeAll(async () => {
    root = await admin();
    const [[row]] = (await root.query('SELECT @@global.long_query_time AS v')) as unknown as [{ v: string }[]];
    longQueryTime = String(row?.v);
    await root.query(`CREATE TABLE t_${s} (a INT)`);
    await root.query(`INSERT INTO t_${s} VALUES (1), (2), (3)`);
    await root.query(`CREATE TABLE td_${s} (id INT, b BIGINT DEFAULT 5)`);
    await root.query(`INSERT INTO td_${s} (id) VALUES (1)`);
    for (const login of [reader, hidden])
      for (const host of ['%', 'localhost']) await root.query(`CREATE USER '${login}'@'${host}' IDENTIFIED BY '${password}'`);
    const readerAccount = await mariadbAccount(u, reader, password);
    for (const [name, rest] of Object.entries(functions)) {
      if (name.startsWith('pk_')) await root.query(`SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')`);
      await root.query(`CREATE ${name.startsWith('cust_') ? `DEFINER = ${readerAccount} ` : ''}FUNCTION ${name}${rest}`);
      await root.query('SET SESSION sql_mode = DEFAULT');
    }
    await root.query(`CREATE PROCEDURE pz_${s}(OUT x VARCHAR(64)) BEGIN END`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW dump_v_${s} AS SELECT dump_${s}() AS d`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW slow_v_${s} AS SELECT slow_${s}(0) AS sl`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW def_v_${s} AS SELECT DEFAULT(b) AS d FROM td_${s}`);
    // The context recipe (docs/context-parameters.md): the login's own function returning the value, a TEMPTABLE view filtering by it.
    await root.query(`CREATE TABLE o_${s} (customer_id INT, item VARCHAR(20))`);
    await root.query(`INSERT INTO o_${s} VALUES (1, 'a'), (1, 'b'), (2, 'c')`);
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW mine_${s} AS SELECT customer_id, item FROM o_${s} WHERE customer_id = cust_${s}() LIMIT 18446744073709551615`,
    );
    for (const login of [reader, hidden])
      for (const host of ['%', 'localhost']) {
        for (const name of Object.keys(functions)) await root.query(`GRANT EXECUTE ON FUNCTION ${db}.${name} TO '${login}'@'${host}'`);
        await root.query(`GRANT SELECT ON ${db}.t_${s} TO '${login}'@'${host}'`);
        if (login === reader) {
          // What the refusal's hint asks for: the login reads routine bodies and the view's definition.
          await root.query(`GRANT SELECT ON mysql.proc TO '${login}'@'${host}'`);
          // A common grant: every routine of the schema, whatever spelling names it.
          await root.query(`GRANT EXECUTE ON ${db}.* TO '${login}'@'${host}'`);
          await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.dump_v_${s} TO '${login}'@'${host}'`);
          await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.slow_v_${s} TO '${login}'@'${host}'`);
          await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.mine_${s} TO '${login}'@'${host}'`);
          await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.def_v_${s} TO '${login}'@'${host}'`);
          await root.query(`GRANT SELECT ON ${db}.td_${s} TO '${login}'@'${host}'`);
        }
      }
    const add = (name: string, login: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, `mariadb://${login}@${u.host}/${db}`, '--password-stdin', ...more], { input: password });
    await add('rd', reader);
    await add('rdctx', reader, '--context', 'CUSTOMER_ID');
    await add('hid', hidden);
    rd = await startShim(home.env, ['--connection', 'rd']);
    rdctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'rdctx']);
    await add('hidctx', hidden, '--context', 'CUSTOMER_ID');
    hid = await startShim(home.env, ['--connection', 'hid']);
    hidctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'hidctx']);
  });

  afterAll(async () => {
    for (const shim of [rd, rdctx, hid, hidctx]) await shim?.close();
    await home.dispose();
    await root?.query(`SET GLOBAL long_query_time = ${Number(longQueryTime)}`).catch(() => {});
    for (const sql of [
      `DROP VIEW IF EXISTS dump_v_${s}`,
      `DROP VIEW IF EXISTS slow_v_${s}`,
      `DROP VIEW IF EXISTS mine_${s}`,
      `DROP VIEW IF EXISTS def_v_${s}`,
      `DROP TABLE IF EXISTS td_${s}`,
      `DROP TABLE IF EXISTS o_${s}`,
      ...Object.keys(functions).map((name) => `DROP FUNCTION IF EXISTS ${name}`),
      `DROP PROCEDURE IF EXISTS pz_${s}`,
      `DROP TABLE IF EXISTS t_${s}`,
      ...[reader, hidden].flatMap((login) => [`DROP USER IF EXISTS '${login}'@'%'`, `DROP USER IF EXISTS '${login}'@'localhost'`]),
    ])
      await root?.query(sql).catch(() => {});
    await root?.end();
    rmSync(dumpFile, { force: true });
  });

  /** A second session running a long statement, seen running on the server before this returns. */
  async function victim(login?: string): Promise<SleepingSession> {
    const conn = login
      ? await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: login, password, database: db })
      : await admin();
    return sleepingSession(root, conn);
  }

  /** The first row's `column`, as a number. */
  const first = (result: Awaited<ReturnType<ShimHandle['call']>>, column: string): number => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return Number((result.structuredContent as { rows: Record<string, unknown>[] }).rows[0]?.[column]);
  };

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    for (const part of parts) expect(textOf(result)).toMatch(part);
  };

  it("refuses a DEFINER function that kills another session's query, directly and through another function", async () => {
    const other = await victim();
    try {
      refused(await rd.call('run_query', { sql: `SELECT kq_${s}(${other.id}) AS k` }), new RegExp(`kq_${s}`), /KILL/, /stored-routine/);
      refused(await rd.call('run_query', { sql: `SELECT wrap_${s}(${other.id}) AS k` }), new RegExp(`wrap_${s}`), /KILL/);
      refused(
        await hid.call('run_query', { sql: `SELECT kq_${s}(${other.id}) AS k` }),
        /SQL SECURITY DEFINER/,
        /may not read/,
        /GRANT SELECT ON mysql\.proc/,
      );
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });

  it('refuses a DEFINER function that sets a server-wide setting', async () => {
    refused(await rd.call('run_query', { sql: `SELECT slow_${s}(7) AS v` }), new RegExp(`slow_${s}`), /SET GLOBAL/);
    const [[row]] = (await root.query('SELECT @@global.long_query_time AS v')) as unknown as [{ v: string }[]];
    expect(String(row?.v)).toBe(longQueryTime);
  });

  it('refuses a DEFINER function that writes a file on the database host, directly and through a view', async () => {
    refused(await rd.call('run_query', { sql: `SELECT dump_${s}() AS d` }), new RegExp(`dump_${s}`), /INTO OUTFILE/);
    refused(await rd.call('run_query', { sql: `SELECT d FROM dump_v_${s}` }), new RegExp(`dump_v_${s}`), /INTO OUTFILE/);
    // The other paths agent text takes to the server: a sample of the view, a plan of the call.
    refused(await rd.call('sample_rows', { table: `dump_v_${s}` }), new RegExp(`dump_v_${s}`), /INTO OUTFILE/);
    refused(await rd.call('explain_query', { sql: `SELECT dump_${s}() AS d` }), new RegExp(`dump_${s}`), /INTO OUTFILE/);
    expect(existsSync(dumpFile)).toBe(false);
  });

  it('answers harmless functions: a DEFINER one whose body reads nothing, and an INVOKER one whose body it reads', async () => {
    expect(first(await rd.call('run_query', { sql: `SELECT plus_${s}(1) AS v` }), 'v')).toBe(2);
    expect(first(await rd.call('run_query', { sql: `SELECT inv_${s}() AS n` }), 'n')).toBe(3);
    // Without context values a DEFINER function may read tables: the login's rows are not separated.
    expect(first(await rd.call('run_query', { sql: `SELECT cnt_${s}() AS n` }), 'n')).toBe(3);
  });

  it("refuses DEFAULT(col), which evaluates a column's default (a sequence's next value), in a body, a view and the statement", async () => {
    refused(await rd.call('run_query', { sql: `SELECT def_${s}() AS d` }), new RegExp(`def_${s}`), /DEFAULT\(column\)/, /stored-routine/);
    refused(await rd.call('run_query', { sql: `SELECT d FROM def_v_${s}` }), new RegExp(`def_v_${s}`), /DEFAULT\(column\)/);
    refused(await rd.call('sample_rows', { table: `def_v_${s}` }), new RegExp(`def_v_${s}`), /DEFAULT\(column\)/);
    refused(await rd.call('run_query', { sql: `SELECT DEFAULT(b) AS d FROM td_${s}` }), /DEFAULT\(column\)/, /read-only/);
    // A variable's declared default is not the call.
    expect(first(await rd.call('run_query', { sql: `SELECT decl_${s}() AS v` }), 'v')).toBe(5);
    expect(first(await rd.call('run_query', { sql: `SELECT b FROM td_${s}` }), 'b')).toBe(5);
  });

  it('refuses a function that assigns a session or user variable, on read-only and context connections', async () => {
    for (const shim of [rd, rdctx]) {
      refused(await shim.call('run_query', { sql: `SELECT sm_${s}() AS v` }), new RegExp(`sm_${s}`), /sql_mode/, /session-change/);
      refused(await shim.call('run_query', { sql: `SELECT uv_${s}() AS v` }), new RegExp(`uv_${s}`), new RegExp(`@uv_${s}`));
      refused(await shim.call('run_query', { sql: `SELECT sv1_${s}() AS v` }), new RegExp(`sv1_${s}`), /sql_mode/, /session-change/);
      refused(await shim.call('run_query', { sql: `SELECT fo_${s}() AS v` }), new RegExp(`fo_${s}`), new RegExp(`@q_${s}`));
    }
    // Locals are the body's own: a function that sets only them runs.
    expect(first(await rd.call('run_query', { sql: `SELECT plus_${s}(1) AS v` }), 'v')).toBe(2);
  });

  it('refuses an INVOKER function whose body the login may not read: what it calls cannot be judged', async () => {
    const other = await victim();
    try {
      refused(
        await hid.call('run_query', { sql: `SELECT wk_${s}(${other.id}) AS k` }),
        new RegExp(`wk_${s}`),
        /SQL SECURITY INVOKER/,
        /may not read/,
        /GRANT SELECT ON mysql\.proc/,
      );
      refused(await hid.call('run_query', { sql: `SELECT inv_${s}() AS n` }), new RegExp(`inv_${s}`), /may not read/);
      // The DEFINER function it wraps is still judged where the body is readable.
      refused(await rd.call('run_query', { sql: `SELECT wk_${s}(${other.id}) AS k` }), new RegExp(`kq_${s}`), /KILL/);
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
    // Another caller of the same login: its own rights reach its own sessions.
    const same = await victim(hidden);
    try {
      refused(await hid.call('run_query', { sql: `SELECT stop_${s}(${same.id}) AS k` }), new RegExp(`stop_${s}`), /may not read/);
      expect(await same.running()).toBe(true);
    } finally {
      await same.end();
    }
    // With context values, a hidden wrapper of a DEFINER function reading tables is refused too.
    refused(await hidctx.call('run_query', { sql: `SELECT wc_${s}() AS n` }), new RegExp(`wc_${s}`), /may not read/);
  });

  it('follows a view wherever the statement names it, and plans nothing that reaches it', async () => {
    for (const sql of [
      `SELECT * FROM (slow_v_${s})`,
      `SELECT * FROM t_${s} WHERE a IN (SELECT sl FROM (slow_v_${s}))`,
      `SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(x INT PATH '$')) j, slow_v_${s}`,
      `SELECT * FROM (t_${s}, slow_v_${s})`,
      `SELECT * FROM t_${s} JOIN (slow_v_${s}) ON 1`,
    ])
      refused(await rd.call('run_query', { sql }), new RegExp(`slow_v_${s}`), /SET GLOBAL/);
    refused(await rd.call('explain_query', { sql: `SELECT * FROM (slow_v_${s})` }), new RegExp(`slow_v_${s}`), /SET GLOBAL/);
    // Among the names of a wide select list, unqualified and qualified; a wide select of a table still runs.
    const wide = Array.from({ length: 300 }, (_, i) => `a AS c${i}`).join(', ');
    for (const from of [`slow_v_${s}`, `${db}.slow_v_${s}`, `t_${s} JOIN ${db}.slow_v_${s} ON 1`])
      refused(await rd.call('run_query', { sql: `SELECT sl, ${wide} FROM ${from}` }), new RegExp(`slow_v_${s}`), /SET GLOBAL/);
    const ran = await rd.call('run_query', { sql: `SELECT ${wide} FROM t_${s} WHERE a = 1` });
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect((ran.structuredContent as { columns: unknown[] }).columns).toHaveLength(300);
    const [[row]] = (await root.query('SELECT @@global.long_query_time AS v')) as unknown as [{ v: string }[]];
    expect(String(row?.v)).toBe(longQueryTime);
  });

  it('judges a body under the sql_mode it was created with', async () => {
    const other = await victim();
    try {
      refused(await rd.call('run_query', { sql: `SELECT pk_${s}(${other.id}) AS k` }), new RegExp(`pk_${s}`), /KILL/);
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });

  it("calls a routine by the server's own comparison of names: another spelling of a refused one is refused", async () => {
    const other = await victim();
    try {
      // The server resolves names by utf8mb3_general_ci: an accent or another case calls the same function.
      for (const name of [`ķq_${s}`, `KQ_${s}`, `kQ_${s}`]) {
        const result = await rd.call('run_query', { sql: `SELECT ${name}(${other.id}) AS k` });
        refused(result, /KILL/, /stored-routine/);
      }
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
    refused(await rd.call('run_query', { sql: `SELECT slów_${s}(7) AS v` }), /SET GLOBAL/);
    const [[row]] = (await root.query('SELECT @@global.long_query_time AS v')) as unknown as [{ v: string }[]];
    expect(String(row?.v)).toBe(longQueryTime);
  });

  it("follows names by the server's identifier rules, and refuses calls of a package's routines", async () => {
    // A schema of its own, for views named exactly as keywords.
    const kw = `hkw_${s}`;
    const grants = (what: string) => ['%', 'localhost'].map((host) => `GRANT ${what} TO '${reader}'@'${host}'`);
    const setup = [
      `CREATE DATABASE ${kw}`,
      ...['order', 'key', 'rows', '2v', '0x1g', '$v', '1e5v', '123'].map(
        (name) => `CREATE SQL SECURITY DEFINER VIEW ${kw}.\`${name}\` AS SELECT ${db}.slow_${s}(0) AS sl`,
      ),
      `CREATE SQL SECURITY DEFINER VIEW \`9v_${s}\` AS SELECT slow_${s}(0) AS sl`,
      `CREATE FUNCTION ${kw}.\`1f\`() RETURNS DOUBLE SQL SECURITY DEFINER RETURN ${db}.slow_${s}(0)`,
      "SET SESSION sql_mode = 'ORACLE'",
      `CREATE PACKAGE ${kw}.pk AS FUNCTION f RETURN INT; END`,
      `CREATE PACKAGE BODY ${kw}.pk AS FUNCTION f RETURN INT AS BEGIN SET GLOBAL long_query_time = 7; RETURN 1; END; END`,
      'SET SESSION sql_mode = DEFAULT',
      ...grants(`SELECT, SHOW VIEW, EXECUTE ON ${kw}.*`),
      ...grants(`SELECT, SHOW VIEW ON ${db}.\`9v_${s}\``),
    ];
    try {
      for (const sql of setup) await root.query(sql);
      for (const sql of [
        `SELECT * FROM ${kw}.order`,
        `SELECT * FROM ${kw}.key`,
        `SELECT * FROM ${kw} .rows`,
        `SELECT * FROM ${kw}.2v`,
        `SELECT * FROM ${kw}.0x1g`,
        `SELECT * FROM ${kw}.$v`,
        `SELECT * FROM ${kw}.1e5v`,
        `SELECT * FROM ${kw}.123`,
        `SELECT * FROM 9v_${s}`,
        `SELECT (SELECT sl FROM 9v_${s}) AS x`,
        `SELECT ${kw}.1f() AS x`,
      ])
        refused(await rd.call('run_query', { sql }), /stored-routine/, /SET GLOBAL/);
      refused(await rd.call('run_query', { sql: `SELECT ${kw}.pk.f() AS x` }), /stored-routine/, new RegExp(`package ${kw}\\.pk`));
      const [[row]] = (await root.query('SELECT @@global.long_query_time AS v')) as unknown as [{ v: string }[]];
      expect(String(row?.v)).toBe(longQueryTime);
    } finally {
      await root.query('SET SESSION sql_mode = DEFAULT');
      await root.query(`DROP VIEW IF EXISTS \`9v_${s}\``);
      await root.query(`DROP DATABASE IF EXISTS ${kw}`);
    }
  });

  it('hanactl test warns that the login may call DEFINER routines, and how many bodies of any routine it may not read', async () => {
    const count = Object.values(functions).filter((rest) => rest.includes('SECURITY DEFINER')).length;
    // Reading mysql.proc, rd sees every routine on the server, other schemas' too.
    const readable = await home.ok(['test', 'rd']);
    const seen = /warning: "rd" may call (\d+) SQL SECURITY DEFINER routines.*: .*hanactl judges each body/.exec(readable.stderr);
    expect(Number(seen?.[1])).toBeGreaterThanOrEqual(count);
    expect(readable.stderr).not.toMatch(/may not read the body/);
    const unreadable = await home.ok(['test', 'hid']);
    expect(unreadable.stderr).toMatch(new RegExp(`"hid" may call ${count} SQL SECURITY DEFINER routines`));
    expect(unreadable.stderr).toMatch(
      new RegExp(`may not read the body of ${count} of them, and hanactl refuses those \\(GRANT SELECT ON mysql\\.proc`),
    );
    const invokers = Object.values(functions).filter((rest) => rest.includes('SECURITY INVOKER')).length;
    expect(unreadable.stderr).toMatch(
      new RegExp(`"hid" may call ${invokers} SQL SECURITY INVOKER routines whose body it may not read: .*hanactl refuses them`),
    );
    expect(readable.stderr).not.toMatch(/SQL SECURITY INVOKER routines? whose body/);
  });

  it('with context values: refuses a DEFINER function reading tables and one assigning @mcp_*, answers one that reads nothing', async () => {
    refused(await rdctx.call('run_query', { sql: `SELECT cnt_${s}() AS n` }), new RegExp(`cnt_${s}`), /reads tables/);
    // An INVOKER function reads with its caller's rights, and with a DEFINER owner's when one calls it.
    expect(first(await rdctx.call('run_query', { sql: `SELECT inv_${s}() AS n` }), 'n')).toBe(3);
    refused(
      await rdctx.call('run_query', { sql: `SELECT inv_${s}() AS a, wrapinv_${s}() AS b` }),
      new RegExp(`inv_${s}\\(\\) \\(reached through [^)]*wrapinv_${s}`),
      /reads tables/,
    );
    refused(
      await rdctx.call('run_query', { sql: `SELECT forge_${s}() AS n` }),
      new RegExp(`forge_${s}`),
      /@mcp_customer_id/,
      /session-change/,
    );
    expect(first(await rdctx.call('run_query', { sql: `SELECT plus_${s}(4) AS v` }), 'v')).toBe(5);
    // The recipe still separates rows where the login may read its view and function: they are followed and pass.
    const mine = await rdctx.call('run_query', { sql: `SELECT item FROM mine_${s} ORDER BY item` });
    expect(mine.isError, textOf(mine)).toBeFalsy();
    expect((mine.structuredContent as { rows: { item: string }[] }).rows.map((r) => r.item)).toEqual(['a', 'b']);
    // The executor's counters tell hidden rows apart: refused there, read as a client would elsewhere.
    refused(await rdctx.call('run_query', { sql: `SELECT stat_${s}() AS n` }), new RegExp(`stat_${s}`), /executor-statistics/);
    expect(first(await rd.call('run_query', { sql: `SELECT stat_${s}() AS n` }), 'n')).toBeGreaterThanOrEqual(0);
  });
});
