/**
 * PostgreSQL's attribute notation: a name after a dot is a call where no column has that name
 * ((x).f is f(x), t.f is f(t) with the whole row, t.c.f is f(t.c)). Every such name meets the
 * rules a call f(x) meets, in BOTH checks, each on its own (the token rules and PostgreSQL's parser).
 */
import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { sessionChangeAnywhere } from '../../../../daemon/policy/anywhere-rules.js';
import { deniedFunction } from '../../../../daemon/policy/denied-functions.js';
import { postgresStatisticsRule } from '../../../../daemon/policy/executor-statistics.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import * as generated from '../../../../daemon/policy/pg-functions.generated.js';
import { deniedRelationObjection, postgresTokenObjection } from '../../../../daemon/policy/pg-functions.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const read: PolicyOptions = { dialect: 'postgres', allowWrite: false };
const write: PolicyOptions = { dialect: 'postgres', allowWrite: true };
const separated: PolicyOptions = { dialect: 'postgres', allowWrite: false, rowSeparation: true };

/** The parser's check alone, as if the token rules had been fooled into calling `sql` a read. */
const parserAlone = (sql: string, options: PolicyOptions) =>
  postgresParserObjection(sql, options, 'read', (inner) => checkStatement(inner, { ...options, allowWrite: false }));

/** The token rules that judge function names, alone. */
function tokensAlone(sql: string, options: PolicyOptions) {
  const tokens = lex(sql, DIALECTS.postgres.syntax).tokens;
  return (
    sessionChangeAnywhere(tokens, DIALECTS.postgres) ??
    deniedFunction(tokens, options.allowWrite) ??
    postgresTokenObjection(tokens, options.allowWrite) ??
    (options.rowSeparation ? postgresStatisticsRule(tokens) : undefined)
  );
}

/** `sql` refused with `rule` by the whole check and by each check on its own. */
function refusedByEach(sql: string, options: PolicyOptions, rule: string): void {
  expect(checkStatement(sql, options), sql).toMatchObject({ ok: false, rule });
  expect(parserAlone(sql, options), `parser: ${sql}`).toMatchObject({ ok: false, rule });
  expect(tokensAlone(sql, options), `tokens: ${sql}`).toMatchObject({ ok: false, rule });
}

/** The rule refusing the call name(arg) on this connection, or undefined when the call runs. */
function callRule(name: string, arg: string, options: PolicyOptions): string | undefined {
  const verdict = checkStatement(`SELECT ${name}(${arg})`, options);
  // A pg_* name no classified function has (an extension's or a view's name) is refused as a call only.
  return verdict.ok || /is not a PostgreSQL \d+ function/.test(verdict.message) ? undefined : verdict.rule;
}

/** Every way to write the call name(arg) as attribute notation, in several clauses, and under EXPLAIN. */
const attributeForms = (name: string, arg: string, options: PolicyOptions): string[] => [
  `SELECT (${arg}).${name}`,
  `SELECT (p).${name} FROM (SELECT ${arg} AS p) s`,
  `SELECT s.p.${name} FROM (SELECT ${arg} AS p) s`,
  `SELECT (s.p).${name} FROM (SELECT ${arg} AS p) s`,
  `SELECT s.${name} FROM (SELECT ${arg} AS p) s`,
  `SELECT 1 FROM (SELECT ${arg} AS p) s WHERE (s.p).${name} IS NOT NULL ORDER BY 1`,
  `SELECT count(*) FROM (SELECT ${arg} AS p) s GROUP BY s.p HAVING max((s.p).${name}::text) IS NULL`,
  `SELECT ((${arg}).${name}).x`,
  `SELECT "s".p."${name}" FROM (SELECT ${arg} AS p) s`,
  // Where rows are separated EXPLAIN is refused whatever it explains.
  ...(options.rowSeparation ? [] : [`EXPLAIN ANALYZE SELECT (${arg}).${name}`, `EXPLAIN SELECT s.${name} FROM (SELECT ${arg} AS p) s`]),
];

/** The functions the review named, with an argument of the kind each takes, and the connection it ran on. */
const NAMED: readonly (readonly [string, string, PolicyOptions])[] = [
  ['pg_terminate_backend', '22018', read],
  ['pg_stat_get_activity', 'null::int', read],
  ['dblink_connect', "'hostaddr=127.0.0.1 dbname=x user=postgres'::text", read],
  ['dblink_exec', "'create table w(x int)'::text", read],
  ['dblink', "'select 1'::text", read],
  ['gin_clean_pending_list', "'gt_gin'::regclass", read],
  ['pg_stat_reset_single_table_counters', "'orders'::regclass::oid", read],
  ['pg_log_backend_memory_contexts', 'pg_backend_pid()', read],
  ['pg_prewarm', "'orders'::regclass", read],
  ['pg_read_file', "'postmaster.pid'::text", read],
  ['pg_advisory_lock', '1::bigint', read],
  ['pg_cancel_backend', '22018', read],
  ['setseed', '0.5', read],
  ['pg_sleep', '1', read],
  ['pg_stat_reset_shared', "'bgwriter'::text", read],
  ['pg_ls_dir', "'.'::text", read],
  ['lo_unlink', '1::oid', read],
  ['lo_import', "'/etc/passwd'::text", read],
  ['pg_drop_replication_slot', "'s'::name", read],
  ['pg_replication_origin_create', "'o'::text", read],
  ['pg_replication_origin_session_setup', "'o'::text", read],
  ['brin_summarize_new_values', "'b'::regclass", read],
  ['pg_import_system_collations', "'public'::regnamespace", read],
  ['set_limit', '0.5::real', read],
  ['pg_truncate_visibility_map', "'orders'::regclass", read],
  ['txid_current', 'null::int', read],
  ['pg_stat_get_xact_tuples_returned', "'orders_pkey'::regclass::oid", separated],
  ['pg_sequence_last_value', "'orders_id_seq'::regclass", separated],
];

describe('attribute notation calls meet the function rules', () => {
  test.each(NAMED)('%s written after a dot is refused as its call is, by each check', (name, arg, options) => {
    const rule = callRule(name, arg, options);
    expect(rule, `SELECT ${name}(${arg})`).toBeDefined();
    for (const sql of attributeForms(name, arg, options)) refusedByEach(sql, options, rule as string);
  });

  test('the refusal names the function and how to read a column of that name', () => {
    const verdict = checkStatement('SELECT o.setseed FROM orders o', read);
    expect(verdict).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(verdict.ok ? '' : verdict.message).toMatch(/setseed\(value\).*attribute notation.*setseed\(\).*without a table name/s);
  });

  test('a name after a dot written with escapes cannot be checked', () => {
    const sql = 'SELECT (22018).U&"pg_terminate_backen\\0064"';
    expect(checkStatement(sql, write)).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(tokensAlone(sql, write)).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(parserAlone(sql, write)).toMatchObject({ ok: false, rule: 'denied-function' });
  });

  test('columns and fields read after a dot still answer, and a bare column of a refused name too', () => {
    for (const sql of [
      'SELECT o.id, (o).id, o.total FROM orders o',
      'SELECT (s.r).relname FROM (SELECT c AS r FROM pg_catalog.pg_class c) s',
      'SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class',
      'SELECT c.relname, c.relkind FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace',
      'SELECT (ROW(1, 2)::pair).a',
      'SELECT setseed FROM orders',
      'SELECT t.x FROM public.t',
      'EXPLAIN SELECT o.id FROM orders o',
    ]) {
      expect(checkStatement(sql, read), sql).toMatchObject({ ok: true, kind: expect.any(String) });
      expect(parserAlone(sql, read), `parser: ${sql}`).toBeUndefined();
      expect(tokensAlone(sql, read), `tokens: ${sql}`).toBeUndefined();
    }
  });
});

/** Every function name the policy's lists hold: the classification from pg_proc, and the names denied on every engine. */
function listedNames(): string[] {
  const names = new Set<string>(['set_config', 'nextval', 'setval', 'txid_current', 'pg_current_xact_id', 'pg_notify']);
  for (const [list, value] of Object.entries(generated)) {
    // Type names (any, record, ...) are not functions: `(1).any` is a syntax error, not a call.
    if (list === 'PG_BUILTIN_TYPES') continue;
    if (Array.isArray(value)) for (const n of value) names.add(String(n));
    else if (value && typeof value === 'object') for (const n of Object.keys(value)) names.add(n);
  }
  // A name of each denied prefix, and the denied names of other engines.
  for (const n of ['pg_sleep_for', 'pg_advisory_xact_lock', 'pg_try_advisory_lock', 'pg_read_binary_file', 'lo_export', 'dblink_open'])
    names.add(n);
  for (const n of ['sleep', 'benchmark', 'get_lock', 'release_lock', 'load_file', 'sys_exec', 'eval']) names.add(n);
  return [...names].filter((n) => /^[A-Za-z_][A-Za-z0-9_$]*$/.test(n));
}

describe('the class: every function refused as a call is refused after a dot', () => {
  const names = listedNames();
  test.each([
    ['read-only', read],
    ['writable', write],
    ['rows separated', separated],
  ] as const)('%s connection: (1).name and t.name, by each check', (_label, options) => {
    let refusedCalls = 0;
    for (const name of names) {
      const rule = callRule(name, '1', options);
      if (!rule) continue;
      refusedCalls++;
      const lower = name.toLowerCase();
      // A name that is also a refused view's (pg_config) may be refused by the token rules as the view.
      const rules = [rule, deniedRelationObjection(lower)?.rule];
      for (const sql of [`SELECT (1).${lower}`, `SELECT t.${lower} FROM (SELECT 1 AS p) t`]) {
        expect(parserAlone(sql, options), `parser: ${sql}`).toMatchObject({ ok: false, rule });
        expect(tokensAlone(sql, options), `tokens: ${sql}`).toMatchObject({ ok: false, rule: expect.toBeOneOf(rules) });
      }
    }
    expect(refusedCalls).toBeGreaterThan(200);
  });
});
