/**
 * The generator's review gate, on a made-up pg_proc: a function that looks as if it takes SQL text
 * or a relation and is not reviewed, a reviewed name the server lacks, or a volatile function
 * reached without a call in the parse tree, each stops generation with a message naming it.
 */
import { describe, expect, test } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations
import * as script from '../../../../scripts/policy/pg-functions.mjs';

const { classify, deniedRelations, executorStatistics, executorStatisticsViews, secretViews, statementTextFunctions } = script;

interface Fn {
  name: string;
  volatile: 'i' | 's' | 'v';
  nargs: number;
  ndefaults: number;
  variadic: boolean;
  types: string;
  argnames: string[] | null;
  lang: string;
  prosrc: string;
  returns?: string;
}
const fn = (name: string, types: string, more: Partial<Fn> = {}): Fn => ({
  name,
  volatile: 'i',
  nargs: types ? types.split(', ').length : 0,
  ndefaults: 0,
  variadic: false,
  types,
  argnames: null,
  lang: 'internal',
  prosrc: name,
  ...more,
});

interface Classified {
  problems: string[];
  refused: Record<string, string>;
  runsSql: Record<string, Record<number, number[]>>;
  allowedVolatile: string[];
  writes: string[];
  unreviewedVolatile: string[];
}

/** The real server's pg_proc is the staleness test's job; here the reviewed names are taken as present. */
const { problems: baseline } = classify({ version: '15', extensions: [], functions: [] }) as Classified;
const reviewedMissing = (problems: string[]) => problems.filter((p) => !baseline.includes(p));

describe('scripts/policy/pg-functions.mjs classify()', () => {
  test('a function taking SQL text by its argument name, or running EXECUTE in its body, must be reviewed', () => {
    const { problems } = classify({
      version: '15',
      extensions: [],
      functions: [
        fn('run_report', 'text', { argnames: ['sql'] }),
        fn('refresh_all', 'text', { lang: 'plpgsql', prosrc: 'BEGIN EXECUTE $1; END' }),
        fn('upper', 'text'),
      ],
    }) as Classified;
    expect(reviewedMissing(problems)).toEqual([
      'run_report(text) may take SQL text or a relation name and is not reviewed',
      'refresh_all(text) may take SQL text or a relation name and is not reviewed',
    ]);
  });

  test('a function taking a regclass must be reviewed as running that relation’s code or not', () => {
    const c = classify({
      version: '15',
      extensions: [],
      functions: [
        fn('bt_index_check', 'regclass, boolean'),
        fn('satisfies_hash_partition', 'oid, integer, integer, "any"', { variadic: true }),
        fn('gist_page_items', 'bytea, regclass'),
        fn('brin_page_items', 'regclass, bytea'),
        fn('pgstattuple', 'regclass'),
        fn('index_health', 'regclass, integer'),
      ],
    }) as Classified & { runsRelationCode: Record<string, number[]> };
    expect(reviewedMissing(c.problems)).toEqual([
      'index_health(regclass, integer) may take SQL text or a relation name and is not reviewed',
      'brin_page_items(regclass, bytea) takes no relation at position 1',
      'index_health(regclass, integer) takes a relation and is not reviewed as running its code (operator classes, expressions) or not',
    ]);
    expect(c.runsRelationCode).toMatchObject({ bt_index_check: [0], satisfies_hash_partition: [0], gist_page_items: [1] });
    expect(c.runsRelationCode).not.toHaveProperty('pgstattuple');
  });

  test('a function taking a type or relation by OID, or a type by name, must be reviewed as running its code or not', () => {
    const { problems, runsTypeCode } = classify({
      version: '15',
      extensions: [],
      functions: [
        fn('array_in', 'cstring, oid, integer'),
        fn('array_in', 'cstring, regtype'),
        fn('newtype_in', 'cstring, oid, integer'),
        fn('pg_input_is_valid', 'text, text', { argnames: ['input', 'type'] }),
        fn('format_type', 'oid, integer'),
        fn('eqsel', 'internal, oid, internal, integer'),
      ],
    }) as Classified & { runsTypeCode: Record<string, number[]> };
    expect(runsTypeCode.array_in).toEqual([1]);
    expect(reviewedMissing(problems)).toEqual([
      'array_in(cstring, regtype) shares its name with reviewed array_in(cstring, oid, integer) and is not reviewed',
      'newtype_in(cstring, oid, integer) takes a type or relation by OID or name and is not reviewed as running its code or not',
      'pg_input_is_valid(text, text) takes a type or relation by OID or name and is not reviewed as running its code or not',
    ]);
  });

  test('a volatile function reached by an operator, cast or attribute notation stops generation', () => {
    const { problems } = classify({ version: '15', extensions: [], functions: [], hidden: ['operator @@@ runs do_it'] }) as Classified;
    expect(reviewedMissing(problems)).toEqual(['operator @@@ runs do_it, a volatile function the checks would not see called']);
  });

  test('volatile functions fall in exactly one class, and SQL-running overloads carry their arities', () => {
    const c = classify({
      version: '15',
      extensions: [],
      functions: [
        fn('random', '', { volatile: 'v' }),
        fn('nextval', 'regclass', { volatile: 'v' }),
        fn('pg_stat_reset', '', { volatile: 'v' }),
        fn('brand_new_volatile', 'integer', { volatile: 'v' }),
        fn('ts_rewrite', 'tsquery, text', { volatile: 'v' }),
        fn('ts_rewrite', 'tsquery, tsquery, tsquery'),
      ],
    }) as Classified;
    expect(c.allowedVolatile).toEqual(['random']);
    expect(c.writes).toEqual(['nextval']);
    expect(c.refused.pg_stat_reset).toBe('server-control');
    expect(c.unreviewedVolatile).toEqual(['brand_new_volatile']);
    expect(c.runsSql.ts_rewrite).toEqual({ 2: [1] });
  });

  test('views are denied when their definition calls a function refused for reading files', () => {
    const views = [
      { name: 'pg_file_settings', def: 'SELECT a.sourcefile FROM pg_show_all_file_settings() a(sourcefile)' },
      { name: 'pg_settings', def: 'SELECT a.name FROM pg_show_all_settings() a(name)' },
    ];
    expect(deniedRelations(views, { pg_show_all_file_settings: 'host-files', pg_stat_reset: 'server-control' })).toEqual({
      pg_file_settings: 'pg_show_all_file_settings',
    });
  });

  test('views that show a secret are found through views over views; views that mask it are not', async () => {
    const { loadModule } = await import('libpg-query');
    await loadModule();
    const views = [
      { name: 'pg_shadow', def: 'SELECT pg_authid.rolname AS usename, pg_authid.rolpassword AS passwd FROM pg_authid' },
      { name: 'pg_user', def: "SELECT pg_shadow.usename, '********'::text AS passwd FROM pg_shadow" },
      { name: 'pg_roles', def: "SELECT pg_authid.rolname, '********'::text AS rolpassword FROM pg_authid" },
      { name: 'mine', def: 'SELECT * FROM pg_shadow' },
      { name: '_pg_user_mappings', def: 'SELECT um.oid, um.umoptions FROM pg_user_mapping um' },
      {
        name: 'user_mapping_options',
        def: 'SELECT opts.option_name, opts.option_value FROM _pg_user_mappings um, LATERAL pg_options_to_table(um.umoptions) opts(option_name, option_value)',
      },
      { name: 'user_mappings', def: 'SELECT um.oid FROM _pg_user_mappings um' },
      { name: 'pg_stat_activity', def: 'SELECT s.pid, s.query FROM pg_stat_get_activity(NULL::integer) s' },
      { name: 'pg_stat_ssl', def: 'SELECT s.pid, s.ssl FROM pg_stat_get_activity(NULL::integer) s' },
      { name: 'pg_stats', def: 'SELECT s.staattnum FROM pg_statistic s' },
    ];
    const text = statementTextFunctions([
      { name: 'pg_stat_get_activity', argnames: ['pid', 'datid', 'query'], argmodes: '{i,o,o}' },
      { name: 'query_to_xml', argnames: ['query', 'nulls'], argmodes: null },
    ]);
    expect(text).toEqual(['pg_stat_get_activity', 'pg_stat_get_backend_activity']);
    expect(secretViews(views, text)).toEqual({
      _pg_user_mappings: 'pg_user_mapping',
      mine: 'pg_authid',
      pg_shadow: 'pg_authid',
      pg_stat_activity: 'pg_stat_get_activity',
      pg_stats: 'pg_statistic',
      user_mapping_options: 'pg_user_mapping',
    });
  });
});

describe('scripts/policy/pg-functions.mjs executor statistics', () => {
  const extensions = [
    'pg_stat_statements',
    'pg_buffercache',
    'pageinspect',
    'pgstattuple',
    'pg_visibility',
    'pg_freespacemap',
    'pgrowlocks',
    'amcheck',
    'pg_walinspect',
  ];
  const present = extensions.map((extension) => fn(`${extension}_fn`, '', { extension } as Partial<Fn>));

  test('the counters by name and by extension; a statistics function of a new release must be reviewed', () => {
    const { names, problems } = executorStatistics([
      ...present,
      fn('pg_stat_get_xact_tuples_returned', 'oid'),
      fn('pg_stat_have_stats', 'text, oid, oid'),
      fn('pg_stat_clear_snapshot', ''),
      fn('pg_relation_size', 'regclass'),
      fn('pg_database_size', 'oid'),
      fn('pg_stat_io_counts', 'oid'),
      fn('io_counts', 'oid', { prosrc: 'pg_stat_get_io' }),
    ]) as { names: string[]; problems: string[] };
    expect(names).toContain('pg_stat_get_xact_tuples_returned');
    expect(names).toContain('pg_stat_have_stats');
    expect(names).toContain('pgrowlocks_fn');
    expect(names).not.toContain('pg_stat_clear_snapshot');
    expect(names).toContain('pg_relation_size');
    expect(names).toContain('pg_database_size');
    expect(problems).toEqual([
      'pg_stat_io_counts(oid) belongs to the statistics system and is not reviewed as executor statistics or not',
      'io_counts(oid) belongs to the statistics system and is not reviewed as executor statistics or not',
    ]);
  });

  test("the lock manager's state by name; a function of a new release that may report lock or transaction state must be reviewed", () => {
    const { names, problems } = executorStatistics([
      fn('pg_lock_status', ''),
      fn('pg_blocking_pids', 'integer'),
      fn('pg_safe_snapshot_blocking_pids', 'integer'),
      fn('pg_isolation_test_session_is_blocked', 'integer, integer[]'),
      fn('pg_xact_status', 'xid8'),
      fn('pg_advisory_lock', 'bigint', { prosrc: 'pg_advisory_lock_int8' }),
      fn('pg_snapshot_in', 'cstring'),
      fn('pg_lock_waits', 'integer'),
      fn('waiters', 'integer', { prosrc: 'pg_blocking_waiters' }),
      fn('my_lock_helper', 'integer', { lang: 'sql', prosrc: 'SELECT 1' }),
    ]) as { names: string[]; problems: string[] };
    expect(names).toEqual([
      'pg_blocking_pids',
      'pg_isolation_test_session_is_blocked',
      'pg_lock_status',
      'pg_safe_snapshot_blocking_pids',
      'pg_xact_status',
    ]);
    expect(problems.filter((p) => !p.startsWith('reviewed extension'))).toEqual([
      'pg_lock_waits(integer) may report lock or transaction state and is not reviewed as executor statistics or not',
      'waiters(integer) may report lock or transaction state and is not reviewed as executor statistics or not',
    ]);
  });

  test("server-wide counters that advance with any session's writes by name; one of a new release must be reviewed", () => {
    const { names, problems } = executorStatistics([
      fn('pg_database_size', 'name'),
      fn('pg_current_wal_lsn', '', { returns: 'pg_lsn' }),
      fn('txid_current_snapshot', '', { returns: 'txid_snapshot' }),
      fn('pg_snapshot_xmax', 'pg_snapshot', { returns: 'xid8' }),
      fn('pg_control_checkpoint', '', { returns: 'record' }),
      fn('mxid_age', 'xid', { returns: 'integer' }),
      fn('pg_size_pretty', 'bigint', { returns: 'text' }),
      fn('pg_wal_lsn_diff', 'pg_lsn, pg_lsn', { returns: 'numeric' }),
      fn('age', 'timestamp with time zone', { returns: 'interval' }),
      fn('btequalimage', 'oid', { returns: 'boolean' }),
      fn('pg_current_wal_summary_lsn', '', { returns: 'pg_lsn' }),
      fn('next_oid_counter', '', { returns: 'xid8' }),
      fn('pg_cluster_size', '', { returns: 'bigint' }),
      fn('my_size', '', { lang: 'sql', prosrc: 'SELECT 1', returns: 'bigint' }),
    ]) as { names: string[]; problems: string[] };
    for (const name of [
      'pg_database_size',
      'pg_current_wal_lsn',
      'txid_current_snapshot',
      'pg_snapshot_xmax',
      'pg_control_checkpoint',
      'mxid_age',
    ])
      expect(names).toContain(name);
    for (const name of ['pg_size_pretty', 'pg_wal_lsn_diff', 'age', 'btequalimage']) expect(names).not.toContain(name);
    expect(problems.filter((p) => !p.startsWith('reviewed extension'))).toEqual([
      'pg_current_wal_summary_lsn() may report a server-wide counter and is not reviewed as executor statistics or not',
      'next_oid_counter() may report a server-wide counter and is not reviewed as executor statistics or not',
      'pg_cluster_size() may report a server-wide counter and is not reviewed as executor statistics or not',
    ]);
  });

  test('every extension the server offers is reviewed as executor statistics or not', () => {
    const { problems } = executorStatistics(present, ['pgrowlocks', 'hstore', 'pg_new_counters']) as { problems: string[] };
    expect(problems).toEqual([
      'extension pg_new_counters is not reviewed as executor statistics (counts what statements did, reads storage) or not',
    ]);
  });

  test('a reviewed extension the server lacks is a problem', () => {
    const { problems } = executorStatistics(present.slice(1)) as { problems: string[] };
    expect(problems).toEqual(['reviewed extension pg_stat_statements has no functions on the server']);
  });

  test('views over the counters, through views over views, name the function they reach', () => {
    const views = executorStatisticsViews(
      [
        { name: 'my_io', calls: [], reads: ['pg_stat_user_tables'] },
        { name: 'pg_stat_user_tables', calls: [], reads: ['pg_stat_all_tables'] },
        { name: 'pg_stat_all_tables', calls: ['pg_stat_get_numscans', 'count'], reads: ['pg_class'] },
        { name: 'pg_roles', calls: [], reads: ['pg_authid'] },
      ],
      ['pg_stat_get_numscans'],
    );
    expect(views).toEqual({
      my_io: 'pg_stat_get_numscans',
      pg_stat_all_tables: 'pg_stat_get_numscans',
      pg_stat_user_tables: 'pg_stat_get_numscans',
    });
  });
});
