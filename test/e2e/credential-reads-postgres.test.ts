import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { plantedVerifiers } from '../helpers/planted-verifiers.js';
import { expectStatementTextRefused } from '../helpers/statement-text.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_cred_${process.pid}`;
const FDW_PASSWORD = `FdwPassw0rd-${process.pid}`;
const LEAK = `LeakMe-${process.pid}`;

/**
 * No secret reaches a tool result on a PostgreSQL connection whose login role is a superuser,
 * even marked read-only: not through sample_rows, not through run_query by OID or statistics,
 * not through a view over pg_authid, not through another session's statement text.
 */
describe.skipIf(!available)('PostgreSQL credentials stay out of tool results on a superuser connection', () => {
  const other = new pg.Client({ connectionString: PG_URL });
  const { home, admin, db, shim, verifiers } = plantedVerifiers(TAG, 3, async (db) => {
    await db.query('CREATE EXTENSION IF NOT EXISTS postgres_fdw');
    await db.query(`CREATE SERVER ${TAG}_srv FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'localhost')`);
    await db.query(`CREATE USER MAPPING FOR CURRENT_USER SERVER ${TAG}_srv OPTIONS (user 'x', password '${FDW_PASSWORD}')`);
    await db.query('CREATE VIEW public.role_list AS SELECT rolname, rolpassword FROM pg_catalog.pg_authid');
    await db.query('CREATE VIEW public.role_list2 AS SELECT * FROM public.role_list');
    await db.query('CREATE VIEW public.mappings AS SELECT umuser, umoptions FROM pg_catalog.pg_user_mapping');
    await db.query('ANALYZE pg_catalog.pg_authid');
  });

  afterAll(async () => {
    await other.end().catch(() => {});
  });

  /** The whole result as a client receives it holds none of the planted secrets. */
  const noSecret = (result: unknown) => {
    const all = JSON.stringify(result);
    for (const v of verifiers) expect(all).not.toContain(v.slice(0, 20));
    expect(all).not.toContain(FDW_PASSWORD);
    expect(all).not.toContain(LEAK);
    expect(all).not.toMatch(/SCRAM-SHA-256\$\d+:/);
  };

  it.each([
    'pg_authid',
    'pg_shadow',
    'pg_user_mapping',
    'pg_user_mappings',
    'pg_hba_file_rules',
    'pg_file_settings',
    'pg_statistic',
    'pg_stats',
    'PG_AUTHID',
  ])('sample_rows of pg_catalog.%s is refused', async (table) => {
    const result = await shim.call('sample_rows', { table, schema: 'pg_catalog', limit: 100 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*(password|files on the database host|sample values)/);
    noSecret(result);
  });

  it('sample_rows of a view over pg_authid, or of a view over that view, is refused by what it reads', async () => {
    for (const table of ['role_list', 'role_list2']) {
      const result = await shim.call('sample_rows', { table, schema: 'public' });
      expect(result.isError, table).toBe(true);
      expect(textOf(result)).toMatch(
        new RegExp(`Refused: public\\.${table} reads pg_catalog\\."pg_authid"\\. Refused: pg_authid holds password hashes`),
      );
      noSecret(result);
    }
  });

  it('sample_rows of an ordinary table still answers', async () => {
    await db().query('CREATE TABLE public.plain(id int)');
    await db().query('INSERT INTO public.plain VALUES (1), (2)');
    const result = await shim.call('sample_rows', { table: 'plain' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ id: 1 }, { id: 2 }] });
  });

  it.each([
    "SELECT substr(x, strpos(x, 'SCRAM'), 140) AS hash FROM (SELECT table_to_xml('1260', true, false, '')::text AS x) s",
    "SELECT substr(x, strpos(x, 'password='), 40) AS opt FROM (SELECT table_to_xml('1418', true, false, '')::text AS x) s",
    "SELECT histogram_bounds::text FROM pg_stats WHERE tablename = 'pg_authid' AND attname = 'rolpassword'",
    "SELECT stavalues1::text FROM pg_statistic WHERE starelid = 1260 AND stavalues1::text LIKE '%SCRAM%'",
  ])('run_query refuses %s', async (sql) => {
    const result = await shim.call('run_query', { sql });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^STATEMENT_REFUSED: Refused: /);
    noSecret(result);
  });

  it('refuses views over pg_authid and pg_user_mapping in run_query, by what they read', async () => {
    for (const sql of [
      'SELECT * FROM role_list',
      'SELECT * FROM mappings',
      'SELECT umoptions::text AS o FROM mappings',
      `SELECT rolpassword FROM role_list WHERE rolname = '${TAG}_1'`,
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, sql).toBe(true);
      expect(textOf(result)).toMatch(/Refused: .*(role_list reads pg_authid|mappings reads pg_user_mapping)/);
      noSecret(result);
    }
  });

  it('refuses an XML export of a view by what the view reads', async () => {
    const result = await shim.call('run_query', { sql: "SELECT table_to_xml('public.role_list', true, false, '')::text AS x" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*role_list reads pg_authid/);
    noSecret(result);
  });

  it('hanactl test and add warn when the login is a superuser, and not for a least-privilege role', async () => {
    const tested = await home.ok(['test', 'pgsu']);
    expect(tested.stderr).toMatch(/warning: "pgsu" logs in as a PostgreSQL superuser, .*least-privilege/);
    await admin.query(`CREATE ROLE ${TAG}_5 LOGIN`);
    const url = new URL(PG_URL);
    url.username = `${TAG}_5`;
    url.pathname = `/${TAG}`;
    const added = await home.ok(['add', '--no-password', 'pgagent', url.toString()]);
    expect(added.stdout).toMatch(/The connection test passed/);
    expect(added.stderr).not.toMatch(/warning/);
    await admin.query(`GRANT pg_read_all_data TO ${TAG}_5`);
    const member = await home.ok(['test', 'pgagent']);
    expect(member.stderr).toMatch(/warning: "pgagent" logs in as a member of pg_read_all_data/);
  });

  it("refuses another session's ALTER ROLE in pg_stat_activity, however it is transformed", async () => {
    await admin.query(`CREATE ROLE ${TAG}_4 LOGIN`);
    await other.connect();
    await other.query(`ALTER ROLE ${TAG}_4 PASSWORD '${LEAK}'`);
    // The other session is idle now, and pg_stat_activity keeps its last statement. The review's
    // inputs: a transform of the text undoes masking of the cell, so the text is refused first.
    for (const sql of [
      `SELECT query FROM pg_stat_activity WHERE query LIKE 'ALTER ROLE ${TAG}%'`,
      "SELECT encode(convert_to(query,'UTF8'),'hex') FROM pg_stat_activity WHERE query LIKE 'ALTER ROLE%'",
      "SELECT reverse(query) FROM pg_stat_activity WHERE query LIKE 'ALTER ROLE%'",
      "SELECT replace(query,'PASSWORD','PASS_WORD') FROM pg_stat_activity WHERE query LIKE 'ALTER ROLE%'",
      'SELECT reverse(query) FROM pg_stat_get_activity(NULL)',
      'SELECT reverse(pg_stat_get_backend_activity(b)) FROM pg_stat_get_backend_idset() b',
    ]) {
      const result = await shim.call('run_query', { sql });
      expectStatementTextRefused(result, sql, LEAK);
      noSecret(result);
    }
    const sample = await shim.call('sample_rows', { table: 'pg_stat_activity', schema: 'pg_catalog' });
    expect(sample.isError).toBe(true);
    expect(textOf(sample)).toMatch(/Refused: .*other sessions' statements/);
    noSecret(sample);
  });

  it('refuses the FDW password through information_schema, in run_query and sample_rows alike', async () => {
    for (const sql of [
      'SELECT * FROM information_schema.user_mapping_options',
      "SELECT replace(array_to_string(umoptions,' '),'password','pw') FROM information_schema._pg_user_mappings",
      'SELECT * FROM pg_user_mappings',
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, sql).toBe(true);
      expect(textOf(result), sql).toMatch(/^STATEMENT_REFUSED: Refused: \w+ (shows what pg_user_mapping holds|holds password hashes)/);
      noSecret(result);
      expect(JSON.stringify(result)).not.toContain(FDW_PASSWORD.replace('password', 'pw'));
    }
    const sample = await shim.call('sample_rows', { table: 'user_mapping_options', schema: 'information_schema' });
    expect(sample.isError).toBe(true);
    expect(textOf(sample)).toMatch(/Refused: /);
    noSecret(sample);
    // A view that shows who is mapped, and no options, still answers.
    const mapped = await shim.call('run_query', { sql: 'SELECT foreign_server_name FROM information_schema.user_mappings' });
    expect(mapped.isError, textOf(mapped)).toBeFalsy();
    expect(mapped.structuredContent).toMatchObject({ rows: [{ foreign_server_name: `${TAG}_srv` }] });
  });
  it('reads the settings wholesale where the server holds no setting that can carry a secret (none is set here)', async () => {
    const held = await admin.query(
      "SELECT name FROM pg_settings WHERE name IN ('primary_conninfo', 'restore_command', 'archive_command', 'archive_cleanup_command', 'recovery_end_command', 'ssl_passphrase_command') AND setting NOT IN ('', '(disabled)')",
    );
    expect(held.rows).toEqual([]);
    for (const sql of [
      'SHOW ALL',
      "SELECT setting FROM pg_settings WHERE name = 'work_mem'",
      "SELECT count(*) AS n FROM pg_show_all_settings() WHERE name = 'work_mem'",
      "SELECT current_setting('work' || '_mem') AS v",
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    }
  });
});
