/**
 * Files on the MariaDB host, through the real shim, daemon and server, on read-only connections
 * as root (FILE privilege; secure_file_priv NULL, so the server writes anywhere its user may):
 * a read-only transaction does not stop INTO OUTFILE or INTO DUMPFILE, so the statement check is
 * what refuses them. `@a.` is one variable name for the server (sql_lex.cc MY_LEX_HOSTNAME), so
 * the INTO after it is a keyword; the check reads it so, and the raw-text layer refuses the words
 * anyway. The same reading refuses a context variable assigned after `@a.`.
 */

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(4).toString('hex')}`;

describe.skipIf(!available)('INTO OUTFILE and INTO DUMPFILE never reach the MariaDB host', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let ro: ShimHandle;
  let ctx: ShimHandle;
  let wr: ShimHandle;
  const paths: string[] = [];
  const path = (what: string): string => {
    const p = `/tmp/hanactl_mylex_${s}_${what}`;
    paths.push(p);
    return p;
  };

  beforeAll(async () => {
    root = await openMariadbAdmin({ database: false });
    await home.ok(['add', '--no-test', '--no-password', 'ro', MYSQL_URL]);
    await home.ok(['add', '--no-test', '--no-password', 'ctx', MYSQL_URL, '--context', 'CUSTOMER_ID']);
    await home.ok(['add', '--no-test', '--no-password', 'wr', MYSQL_URL, '--allow-write']);
    ro = await startShim(home.env, ['--connection', 'ro']);
    wr = await startShim(home.env, ['--connection', 'wr']);
    ctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'ctx']);
  });

  afterAll(async () => {
    for (const shim of [ro, ctx, wr]) await shim?.close();
    await home.dispose();
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    for (const part of parts) expect(textOf(result)).toMatch(part);
  };

  it('runs as root with the FILE privilege and no secure_file_priv: only the check stands between a call and the file', async () => {
    const [[row]] = (await root.query('SELECT @@secure_file_priv AS p, CURRENT_USER() AS u')) as unknown as [
      { p: string | null; u: string }[],
    ];
    expect(row?.p).toBeNull();
    expect(row?.u).toMatch(/^root@/);
    const [grants] = (await root.query('SHOW GRANTS')) as unknown as [Record<string, string>[]];
    expect(grants.map((g) => Object.values(g)[0]).join('\n')).toMatch(/ALL PRIVILEGES ON \*\.\*/);
  });

  it('refuses INTO OUTFILE and INTO DUMPFILE after a variable name ending in a dot, and writes no file', async () => {
    const cases = [
      `select 'payload' order by @a. into dumpfile '${path('dump')}'`,
      `select @a. into outfile '${path('out')}'`,
      `SELECT 'payload' ORDER BY @a.b. INTO OUTFILE '${path('out2')}'`,
      `select @a.\tinto outfile '${path('tab')}'`,
      `select @a./**/into outfile '${path('comment')}'`,
      `SELECT t. INTO OUTFILE '${path('dot')}' FROM (SELECT 1 AS a) t`,
    ];
    for (const sql of cases)
      for (const tool of ['run_query', 'explain_query']) refused(await ro.call(tool, { sql }), /OUTFILE|DUMPFILE/, /host/);
    for (const p of paths) expect(existsSync(p), p).toBe(false);
  });

  it('refuses the words anywhere in the text, and takes them as a parameter', async () => {
    for (const sql of ["SELECT 'into outfile' AS w", 'SELECT 1 AS w /* dumpfile */', "SELECT 'load_file(' AS w"])
      refused(await ro.call('run_query', { sql }), /OUTFILE|DUMPFILE|LOAD_FILE/, /anywhere in the text/, /parameter/);
    const bound = await ro.call('run_query', { sql: 'SELECT ? AS w', params: ['into outfile'] });
    expect(bound.isError, textOf(bound)).toBeFalsy();
    expect(textOf(bound)).toContain('into outfile');
  });

  it('matches the server: keywords and built-in function names only in ASCII', async () => {
    // The raw-text layer folds ASCII case only; these spellings are no keyword or function for the server.
    for (const [sql, errno] of [
      ["SELECT lóad_file('/etc/hostname')", 1305],
      ["SELECT LOAD_FİLE('/etc/hostname')", 1305],
      ["SELECT 1 INTO outfíle '/nowhere'", 1327],
    ] as const)
      await expect(root.query(sql)).rejects.toMatchObject({ errno });
  });

  it('refuses EXECUTE IMMEDIATE on a writable connection: the text it runs is built when it runs', async () => {
    const sql = `EXECUTE IMMEDIATE CONCAT('SELECT 1 INTO OUT', 'FILE ''${path('dynamic')}''')`;
    refused(await wr.call('run_query', { sql }), /EXECUTE IMMEDIATE/, /dynamic|built/);
    refused(await ro.call('run_query', { sql }));
    for (const p of paths) expect(existsSync(p), p).toBe(false);
  });

  it('refuses a context variable assigned after a variable name ending in a dot', async () => {
    for (const sql of [
      'SELECT 1 ORDER BY @a. INTO @mcp_customer_id',
      'SELECT 1 FROM (SELECT 1 AS a) t ORDER BY @a.b. INTO @mcp_customer_id',
      'SELECT \\Ninto @mcp_customer_id',
    ]) {
      refused(await ctx.call('run_query', { sql }), /mcp_customer_id/, /session/);
      refused(await ro.call('run_query', { sql }), /mcp_customer_id/);
    }
    const value = await ctx.call('run_query', { sql: 'SELECT @mcp_customer_id AS v' });
    expect(value.isError, textOf(value)).toBeFalsy();
    expect(textOf(value)).toMatch(/\b1\b/);
  });
});
