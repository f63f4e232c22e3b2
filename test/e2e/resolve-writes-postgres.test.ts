import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_writes_${process.pid}`;

/** A trigger function that reads other sessions' statements with its owner's rights. */
const PEEK_TRIGGER =
  'CREATE FUNCTION public.peek_trg() RETURNS trigger SECURITY DEFINER LANGUAGE plpgsql AS $$ BEGIN PERFORM count(*) FROM pg_catalog.pg_stat_activity; RETURN NEW; END $$';

/**
 * What a write to a table runs beyond what the statement names, each reaching a SECURITY
 * DEFINER function or a view over other sessions' statements: a rule, row, statement and
 * constraint triggers, a trigger on a partition or on the table a view writes to or a cascade
 * deletes from, a default, a generated column, a CHECK constraint and an expression index; a
 * trigger's or default's function that writes to a table whose trigger peeks; a TRUNCATE
 * trigger, an INSTEAD OF trigger and a trigger's WHEN clause.
 */
const OBJECTS = [
  PEEK_TRIGGER,
  "CREATE FUNCTION public.peek_int() RETURNS int SECURITY DEFINER LANGUAGE sql AS 'SELECT count(*)::int FROM pg_catalog.pg_stat_activity'",
  "CREATE FUNCTION public.peek_imm(a int) RETURNS int IMMUTABLE SECURITY DEFINER LANGUAGE sql AS 'SELECT a'",
  "CREATE FUNCTION public.peek_ok(a int) RETURNS boolean SECURITY DEFINER LANGUAGE sql AS 'SELECT a >= 0'",
  'CREATE VIEW public.sessions AS SELECT pid, query FROM pg_catalog.pg_stat_activity',
  'CREATE TABLE public.rule_log (q text)',
  'CREATE TABLE public.t_rule (n int)',
  'CREATE RULE log_sessions AS ON INSERT TO public.t_rule DO ALSO INSERT INTO public.rule_log SELECT query FROM public.sessions',
  'CREATE TABLE public.t_row (n int)',
  'CREATE TRIGGER peek BEFORE INSERT OR UPDATE ON public.t_row FOR EACH ROW EXECUTE FUNCTION public.peek_trg()',
  'CREATE VIEW public.v_row AS SELECT n FROM public.t_row',
  'CREATE TABLE public.t_stmt (n int)',
  'INSERT INTO public.t_stmt VALUES (1)',
  'CREATE TRIGGER peek AFTER UPDATE ON public.t_stmt FOR EACH STATEMENT EXECUTE FUNCTION public.peek_trg()',
  'CREATE TABLE public.t_con (n int)',
  'INSERT INTO public.t_con VALUES (1)',
  'CREATE CONSTRAINT TRIGGER peek AFTER DELETE ON public.t_con FOR EACH ROW EXECUTE FUNCTION public.peek_trg()',
  'CREATE TABLE public.t_default (n int, m int DEFAULT public.peek_int())',
  'CREATE TABLE public.t_generated (n int, g int GENERATED ALWAYS AS (public.peek_imm(n)) STORED)',
  'CREATE TABLE public.t_check (n int CHECK (public.peek_ok(n)))',
  'CREATE TABLE public.t_index (n int)',
  'CREATE INDEX ON public.t_index (public.peek_imm(n))',
  'CREATE TABLE public.fk_parent (id int PRIMARY KEY)',
  'INSERT INTO public.fk_parent VALUES (1)',
  'CREATE TABLE public.fk_child (parent int REFERENCES public.fk_parent ON DELETE CASCADE)',
  'INSERT INTO public.fk_child VALUES (1)',
  'CREATE TRIGGER peek BEFORE DELETE ON public.fk_child FOR EACH ROW EXECUTE FUNCTION public.peek_trg()',
  'CREATE TABLE public.p_parent (n int) PARTITION BY RANGE (n)',
  'CREATE TABLE public.p_child PARTITION OF public.p_parent FOR VALUES FROM (0) TO (10)',
  'CREATE TRIGGER peek BEFORE INSERT ON public.p_child FOR EACH ROW EXECUTE FUNCTION public.peek_trg()',
  // A trigger, and a default, whose function writes to a table whose own trigger peeks.
  'CREATE TABLE public.audit_log (n int)',
  'CREATE TRIGGER peek BEFORE INSERT ON public.audit_log FOR EACH ROW EXECUTE FUNCTION public.peek_trg()',
  'CREATE FUNCTION public.audit_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO public.audit_log VALUES (NEW.n); RETURN NEW; END $$',
  'CREATE TABLE public.t_audit (n int)',
  'CREATE TRIGGER audited AFTER INSERT ON public.t_audit FOR EACH ROW EXECUTE FUNCTION public.audit_trg()',
  'CREATE FUNCTION public.logged_one() RETURNS int LANGUAGE sql BEGIN ATOMIC INSERT INTO public.audit_log VALUES (1); SELECT 1; END',
  'CREATE TABLE public.t_atomic (n int DEFAULT public.logged_one())',
  // A TRUNCATE trigger, an INSTEAD OF trigger on a view, a trigger's WHEN clause.
  'CREATE TABLE public.t_trunc (n int)',
  'CREATE TRIGGER peek BEFORE TRUNCATE ON public.t_trunc FOR EACH STATEMENT EXECUTE FUNCTION public.peek_trg()',
  'CREATE VIEW public.v_instead AS SELECT 1 AS n',
  'CREATE TRIGGER peek INSTEAD OF INSERT ON public.v_instead FOR EACH ROW EXECUTE FUNCTION public.peek_trg()',
  "CREATE FUNCTION public.plain_trg() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'",
  'CREATE TABLE public.t_when (n int)',
  'CREATE TRIGGER when_peek BEFORE INSERT ON public.t_when FOR EACH ROW WHEN (public.peek_ok(NEW.n)) EXECUTE FUNCTION public.plain_trg()',
  // hanactl's own key table: a write's RETURNING would read it.
  'CREATE SCHEMA hanactl',
  'CREATE TABLE hanactl.context_keys (id text PRIMARY KEY, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)',
  "INSERT INTO hanactl.context_keys VALUES ('k1', '\\x3636', '\\x5c5c')",
  // What still runs: ordinary tables with ordinary triggers, defaults, checks and cascades.
  'CREATE TABLE public.counter (c int)',
  'INSERT INTO public.counter VALUES (0)',
  'CREATE FUNCTION public.count_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE public.counter SET c = c + 1; RETURN NEW; END $$',
  'CREATE TABLE public.plain (id serial PRIMARY KEY, n int DEFAULT 0 CHECK (n >= 0), at timestamptz DEFAULT now(), twice int GENERATED ALWAYS AS (n * 2) STORED)',
  'CREATE INDEX ON public.plain (lower(n::text))',
  'CREATE TRIGGER counted AFTER INSERT ON public.plain FOR EACH ROW EXECUTE FUNCTION public.count_trg()',
  'CREATE TRIGGER counted_stmt AFTER UPDATE ON public.plain FOR EACH STATEMENT EXECUTE FUNCTION public.count_trg()',
  'CREATE TABLE public.plain_child (parent int REFERENCES public.plain ON DELETE CASCADE)',
  'CREATE TABLE public.plain_parts (n int) PARTITION BY RANGE (n)',
  'CREATE TABLE public.plain_part PARTITION OF public.plain_parts FOR VALUES FROM (0) TO (10)',
];

/**
 * run_query on a writable PostgreSQL connection resolves what a write runs, not only what it
 * names: the written table's rules, triggers, defaults, generated columns, constraints, indexes,
 * partitions and the tables its cascades write to, as the server recorded them.
 */
describe.skipIf(!available)('run_query resolves what a write to a table runs', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let db: pg.Client | undefined;
  let writer: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    db = scratch.db;
    const url = scratch.url;
    await home.ok(['add', '--no-test', '--no-password', '--allow-write', 'pgwrites', url]);
    writer = await startShim(home.env, ['--connection', 'pgwrites']);
  });

  afterAll(async () => {
    await writer?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['INSERT INTO t_rule VALUES (1)', /Refused: .*t_rule.* reads pg_stat_activity/],
    ['INSERT INTO t_row VALUES (1)', /Refused: .*t_row.* calls peek_trg\(\), a SECURITY DEFINER function/],
    ['INSERT INTO v_row VALUES (1)', /Refused: .*v_row.* calls peek_trg\(\)/],
    ['MERGE INTO t_row USING (SELECT 1 AS n) s ON t_row.n = s.n WHEN NOT MATCHED THEN INSERT VALUES (s.n)', /calls peek_trg\(\)/],
    ['WITH w AS (INSERT INTO t_row VALUES (2) RETURNING n) SELECT n FROM w', /Refused: .*t_row.* calls peek_trg\(\)/],
    ['UPDATE t_stmt SET n = 2', /Refused: .*t_stmt.* calls peek_trg\(\)/],
    ['DELETE FROM t_con', /Refused: .*t_con.* calls peek_trg\(\)/],
    ['INSERT INTO t_default (n) VALUES (1)', /Refused: .*t_default.* calls peek_int\(\)/],
    ['INSERT INTO t_generated (n) VALUES (1)', /Refused: .*t_generated.* calls peek_imm\(\)/],
    ['INSERT INTO t_check VALUES (1)', /Refused: .*t_check.* calls peek_ok\(\)/],
    ['INSERT INTO t_index VALUES (1)', /Refused: .*t_index.* calls peek_imm\(\)/],
    ['DELETE FROM fk_parent', /Refused: .*fk_parent.* calls peek_trg\(\)/],
    ['INSERT INTO p_parent VALUES (1)', /Refused: .*p_parent.* calls peek_trg\(\)/],
    ['INSERT INTO t_audit VALUES (1)', /Refused: .*t_audit.* calls peek_trg\(\)/],
    ['INSERT INTO t_atomic DEFAULT VALUES', /Refused: .*t_atomic.* calls peek_trg\(\)/],
    ['TRUNCATE t_trunc', /Refused: .*t_trunc.* calls peek_trg\(\)/],
    ['INSERT INTO v_instead VALUES (1)', /Refused: .*v_instead.* calls peek_trg\(\)/],
    ['INSERT INTO t_when VALUES (1)', /Refused: .*t_when.* calls peek_ok\(\)/],
    ['DELETE FROM hanactl.context_keys RETURNING inner_pad', /context_keys/],
    ["UPDATE hanactl.context_keys SET id = 'k2' RETURNING outer_pad", /context_keys/],
  ])('refuses %s', async (sql, message) => {
    const result = await writer.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).not.toMatch(/pg_stat_activity;|\\x3636|\\x5c5c/);
  });

  it('ran none of the refused writes', async () => {
    const counts = await db?.query(
      `SELECT (SELECT count(*) FROM rule_log)::int AS rule_log, (SELECT count(*) FROM t_row)::int AS t_row,
              (SELECT count(*) FROM t_con)::int AS t_con, (SELECT count(*) FROM fk_child)::int AS fk_child,
              (SELECT count(*) FROM p_parent)::int AS p_parent, (SELECT count(*) FROM t_default)::int AS t_default,
              (SELECT count(*) FROM audit_log)::int AS audit_log, (SELECT count(*) FROM t_when)::int AS t_when,
              (SELECT count(*) FROM hanactl.context_keys WHERE id = 'k1')::int AS keys`,
    );
    expect(counts?.rows).toEqual([
      { rule_log: 0, t_row: 0, t_con: 1, fk_child: 1, p_parent: 0, t_default: 0, audit_log: 0, t_when: 0, keys: 1 },
    ]);
  });

  /** The rows of a call that must answer, or a failed expectation with the call's text. */
  const rowsOf = async (sql: string): Promise<unknown> => {
    const result = await writer.call('run_query', { sql });
    expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    return (result.structuredContent as { rows: unknown }).rows;
  };

  it('runs writes to ordinary tables with ordinary triggers, defaults, checks and cascades, each once', async () => {
    expect(await rowsOf('INSERT INTO plain (n) VALUES (5) RETURNING n, twice')).toEqual([{ n: 5, twice: 10 }]);
    expect(await rowsOf('INSERT INTO plain_child SELECT id FROM plain')).toEqual([]);
    expect(await rowsOf('UPDATE plain SET n = n + 1 RETURNING n')).toEqual([{ n: 6 }]);
    expect(await rowsOf('INSERT INTO plain_parts VALUES (3) RETURNING n')).toEqual([{ n: 3 }]);
    const before = await db?.query('SELECT (SELECT c FROM counter) AS c, (SELECT count(*)::int FROM plain_child) AS children');
    // One row trigger on the insert, one statement trigger on the update.
    expect(before?.rows).toEqual([{ c: 2, children: 1 }]);
    expect(await rowsOf('DELETE FROM plain RETURNING n')).toEqual([{ n: 6 }]);
    const after = await db?.query(
      'SELECT (SELECT count(*)::int FROM plain) AS plain, (SELECT count(*)::int FROM plain_child) AS children, (SELECT count(*)::int FROM plain_parts) AS parts',
    );
    expect(after?.rows).toEqual([{ plain: 0, children: 0, parts: 1 }]);
  });
});
