/**
 * A person's function whose body runs a utility statement that a read-only transaction lets run
 * (COPY to a file or a program, ANALYZE, LOAD, CHECKPOINT, REINDEX, CLUSTER, PREPARE), through
 * the real shim, daemon and PostgreSQL on a read-only superuser connection: sent directly each
 * statement is refused, and reached through a function, a view, sample_rows, explain_query or
 * ROWS FROM it is refused too, with nothing left behind. And a foreign table, whose rows come
 * from a server the walk does not see (a loopback postgres_fdw server here).
 */
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_pgutil_${process.pid}`;
const FILE = `/tmp/${TAG}_file`;
const PROGRAM = `/tmp/${TAG}_program`;
const SQL_FILE = `/tmp/${TAG}_sql`;
const WRITER_FILE = `/tmp/${TAG}_writer`;

const loopback = new URL(PG_URL);

const OBJECTS = [
  'CREATE TABLE public.t (id int PRIMARY KEY, copy int, load int, "analyze" int)',
  // Fewer rows than autovacuum's analyze threshold (50), so only a call could change its figures.
  'INSERT INTO public.t SELECT g, g, g, g FROM generate_series(1, 40) g',
  `CREATE FUNCTION public.f_copy() RETURNS int LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 'x') TO '${FILE}'; RETURN 1; END $$`,
  `CREATE FUNCTION public.f_program() RETURNS int LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 'p') TO PROGRAM 'cat > ${PROGRAM}'; RETURN 1; END $$`,
  `CREATE FUNCTION public.f_sql_copy() RETURNS int LANGUAGE sql AS $$ COPY (SELECT 's') TO '${SQL_FILE}'; SELECT 1 $$`,
  `CREATE FUNCTION public.f_writer_copy() RETURNS int LANGUAGE plpgsql AS $$ BEGIN COPY (SELECT 'w') TO '${WRITER_FILE}'; RETURN 1; END $$`,
  'CREATE FUNCTION public.f_analyze() RETURNS int LANGUAGE plpgsql AS $$ BEGIN ANALYZE public.t; RETURN 1; END $$',
  "CREATE FUNCTION public.f_load() RETURNS int LANGUAGE plpgsql AS $$ BEGIN LOAD 'auto_explain'; RETURN 1; END $$",
  'CREATE FUNCTION public.f_checkpoint() RETURNS int LANGUAGE plpgsql AS $$ BEGIN CHECKPOINT; RETURN 1; END $$',
  'CREATE FUNCTION public.f_reindex() RETURNS int LANGUAGE plpgsql AS $$ BEGIN REINDEX TABLE public.t; RETURN 1; END $$',
  'CREATE FUNCTION public.f_cluster() RETURNS int LANGUAGE plpgsql AS $$ BEGIN CLUSTER public.t USING t_pkey; RETURN 1; END $$',
  'CREATE FUNCTION public.f_prepare() RETURNS int LANGUAGE sql AS $$ PREPARE hanactl_pgutil_q AS SELECT 1; SELECT 1 $$',
  'CREATE FUNCTION public.f_rows() RETURNS SETOF int LANGUAGE plpgsql AS $$ BEGIN ANALYZE public.t; RETURN NEXT 1; END $$',
  'CREATE VIEW public.v_analyze AS SELECT public.f_analyze() AS n',
  // Controls: a body that only reads, and columns named like the statements.
  'CREATE FUNCTION public.f_select() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) FROM public.t WHERE copy > 0 AND load > 0); END $$',
  'CREATE FUNCTION public.f_sql_select() RETURNS bigint LANGUAGE sql AS $$ SELECT sum(copy + load + "analyze") FROM public.t $$',
  // A foreign table over a loopback server to this same database, and a partition that is one.
  'CREATE EXTENSION postgres_fdw',
  `CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '${loopback.hostname}', port '${loopback.port || '5432'}', dbname '${TAG}')`,
  `CREATE USER MAPPING FOR CURRENT_USER SERVER loop OPTIONS (user '${decodeURIComponent(loopback.username || 'postgres')}')`,
  "CREATE FOREIGN TABLE public.loopft (id int) SERVER loop OPTIONS (schema_name 'public', table_name 't')",
  'CREATE TABLE public.parts (id int) PARTITION BY RANGE (id)',
  'CREATE TABLE public.parts_local PARTITION OF public.parts FOR VALUES FROM (0) TO (100)',
  "CREATE FOREIGN TABLE public.parts_remote PARTITION OF public.parts FOR VALUES FROM (100) TO (200) SERVER loop OPTIONS (schema_name 'public', table_name 't')",
];

describe.skipIf(!available)('utility statements in function bodies and foreign tables on a read-only connection', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let su: ShimHandle;
  let writer: ShimHandle;

  const figures = async (): Promise<{ reltuples: number; relpages: number }> => {
    const { rows } = await scratch!.db.query(
      "SELECT reltuples::float8 AS reltuples, relpages FROM pg_class WHERE oid = 'public.t'::regclass",
    );
    return rows[0];
  };

  beforeAll(async () => {
    for (const f of [FILE, PROGRAM, SQL_FILE, WRITER_FILE]) rmSync(f, { force: true });
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    await home.ok(['add', '--no-test', '--no-password', 'utilsu', scratch.url]);
    await home.ok(['add', '--no-test', '--no-password', '--allow-write', 'utilw', scratch.url]);
    su = await startShim(home.env, ['--connection', 'utilsu']);
    writer = await startShim(home.env, ['--connection', 'utilw']);
  });

  afterAll(async () => {
    await su?.close();
    await writer?.close();
    await home.dispose();
    await scratch?.drop();
    for (const f of [FILE, PROGRAM, SQL_FILE, WRITER_FILE]) rmSync(f, { force: true });
  });

  it.each([
    ['SELECT f_copy()', /Refused: f_copy\(\) runs COPY as a statement of its own, which writes or reads a file on the database host/],
    ['SELECT f_program()', /Refused: f_program\(\) runs COPY/],
    ['SELECT f_sql_copy()', /Refused: f_sql_copy\(\) runs COPY/],
  ])('refuses %s and writes no file', async (sql, message) => {
    const result = await su.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: host-access)');
    for (const f of [FILE, PROGRAM, SQL_FILE]) expect(existsSync(f)).toBe(false);
  });

  it('refuses COPY to a file in a body on a writable connection too', async () => {
    const result = await writer.call('run_query', { sql: 'SELECT f_writer_copy()' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: f_writer_copy\(\) runs COPY/);
    expect(existsSync(WRITER_FILE)).toBe(false);
  });

  it('refuses ANALYZE in a body, by every route, and the table keeps its figures', async () => {
    const before = await figures();
    const routes: [string, Record<string, unknown>][] = [
      ['run_query', { sql: 'SELECT f_analyze()' }],
      ['run_query', { sql: 'SELECT n FROM v_analyze' }],
      ['run_query', { sql: 'SELECT * FROM ROWS FROM (f_rows()) AS r(n)' }],
      ['explain_query', { sql: 'SELECT f_analyze()' }],
      ['sample_rows', { schema: 'public', table: 'v_analyze' }],
    ];
    for (const [tool, args] of routes) {
      const result = await su.call(tool, args);
      expect(result.isError, `${tool} ${JSON.stringify(args)}: ${textOf(result)}`).toBe(true);
      expect(textOf(result)).toMatch(/runs ANALYZE as a statement of its own/);
      expect(textOf(result)).toContain('this connection is read-only');
    }
    expect(await figures()).toEqual(before);
  });

  it('refuses LOAD in a body, and the library is not loaded for a later call', async () => {
    const result = await su.call('run_query', { sql: 'SELECT f_load()' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: f_load\(\) runs LOAD as a statement of its own, which loads a library/);
    for (let i = 0; i < 3; i++) {
      const later = await su.call('run_query', { sql: "SELECT current_setting('auto_explain.log_min_duration', true) AS v" });
      expect(later.isError, textOf(later)).toBeFalsy();
      expect(later.structuredContent).toMatchObject({ rows: [{ v: null }] });
    }
  });

  it.each([
    ['SELECT f_checkpoint()', 'CHECKPOINT'],
    ['SELECT f_reindex()', 'REINDEX'],
    ['SELECT f_cluster()', 'CLUSTER'],
    ['SELECT f_prepare()', 'PREPARE'],
  ])('refuses %s', async (sql, statement) => {
    const result = await su.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain(`runs ${statement} as a statement of its own`);
  });

  it('still answers functions that only read, and columns named copy, load and "analyze"', async () => {
    for (const [sql, row] of [
      ['SELECT f_select()::int AS n', { n: 40 }],
      ['SELECT f_sql_select()::int AS n', { n: 2460 }],
      ['SELECT copy, load, "analyze" FROM t WHERE id = 2', { copy: 2, load: 2, analyze: 2 }],
    ] as const) {
      const result = await su.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [row] });
    }
  });

  it('refuses a foreign table and a foreign partition, naming the server and its wrapper', async () => {
    for (const [tool, args] of [
      ['run_query', { sql: 'SELECT * FROM loopft' }],
      ['run_query', { sql: 'SELECT * FROM parts' }],
      ['sample_rows', { schema: 'public', table: 'loopft' }],
    ] as const) {
      const result = await su.call(tool, args);
      expect(result.isError, `${tool} ${JSON.stringify(args)}: ${textOf(result)}`).toBe(true);
      expect(textOf(result)).toMatch(
        /foreign table (loopft|parts_remote) \(server loop, foreign-data wrapper postgres_fdw\).*this connection is read-only/,
      );
    }
    // A table without a foreign partition still answers; a writable connection still reads the foreign table.
    const local = await su.call('run_query', { sql: 'SELECT count(*)::int AS n FROM parts_local' });
    expect(local.isError, textOf(local)).toBeFalsy();
    const written = await writer.call('run_query', { sql: 'SELECT count(*)::int AS n FROM loopft' });
    expect(written.isError, textOf(written)).toBeFalsy();
    expect(written.structuredContent).toMatchObject({ rows: [{ n: 40 }] });
  });
});
