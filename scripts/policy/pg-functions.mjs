#!/usr/bin/env node
/**
 * Classifies the functions of a real PostgreSQL server for the statement policy and writes
 * daemon/policy/pg-functions.generated.ts.
 *
 *   node scripts/policy/pg-functions.mjs           # regenerate the committed file
 *   node scripts/policy/pg-functions.mjs --check   # exit 1 when the committed file differs
 *
 * The server is HANACTL_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres, a
 * superuser). A scratch database gets every extension the server offers, so contrib functions
 * (dblink, tablefunc, xml2, adminpack, ...) are in pg_proc too; it is dropped afterwards.
 *
 * What pg_proc says is taken from pg_proc: which names exist, which are volatile (provolatile 'v'),
 * the arities of each overload, and which views read through a refused function. What pg_proc
 * cannot say (that a C function runs its text argument as SQL, or reads a server file) is the
 * reviewed knowledge below, from the PostgreSQL documentation of each function; every reviewed
 * name must exist on the server, and every function that looks like it could take SQL text or a
 * relation name (by argument names and types, or an EXECUTE in its SQL/PL/pgSQL body) must be
 * reviewed, or the script fails and names it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModule, parseSync } from 'libpg-query';
import pg from 'pg';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = join(ROOT, 'daemon/policy/pg-functions.generated.ts');
const URL_ = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REGENERATE = 'node scripts/policy/pg-functions.mjs';

// ---- Reviewed knowledge (PostgreSQL 15 documentation, chapters 9 and F) ----

/**
 * Overloads that run a text argument as SQL, by identity signature: the positions of those
 * arguments. hanactl checks each such argument as a statement of its own (it must be one plain
 * string literal that passes), or refuses. Docs: 9.15.3 (query_to_xml...), 9.13 ts_stat and
 * ts_rewrite(query, select), F.43 crosstab.
 */
const RUNS_SQL = {
  'query_to_xml(text, boolean, boolean, text)': [0],
  'query_to_xmlschema(text, boolean, boolean, text)': [0],
  'query_to_xml_and_xmlschema(text, boolean, boolean, text)': [0],
  'ts_stat(text)': [0],
  'ts_stat(text, text)': [0],
  'ts_rewrite(tsquery, text)': [1],
  'crosstab(text)': [0],
  'crosstab(text, integer)': [0],
  'crosstab(text, text)': [0, 1],
  'crosstab2(text)': [0],
  'crosstab3(text)': [0],
  'crosstab4(text)': [0],
};

/** Overloads that read a table named by an argument (regclass); the name must be a literal naming an allowed relation. */
const NAMES_RELATION = {
  'table_to_xml(regclass, boolean, boolean, text)': [0],
  'table_to_xmlschema(regclass, boolean, boolean, text)': [0],
  'table_to_xml_and_xmlschema(regclass, boolean, boolean, text)': [0],
};

/**
 * Functions that take a relation (regclass or oid) and run code the server keeps beside it, by name
 * (every overload): name -> positions of the relation arguments. hanactl follows a relation named by
 * a constant as a read of it (its partition key's and indexes' operator classes, index expressions
 * and predicates: the resolve walk), and refuses one chosen when the statement runs. From the
 * PostgreSQL 15 source: satisfies_hash_partition calls the partition key's hash support functions
 * (partbounds.c); amcheck's bt_index_check and bt_index_parent_check call the index's btree
 * comparison function and, with heapallindexed, evaluate its expressions and predicate
 * (verify_nbtree.c); gin_clean_pending_list calls the GIN class's compare function (ginfast.c);
 * brin_summarize_new_values and brin_summarize_range evaluate the index's expressions and call its
 * class's support functions and operators (brin.c); pageinspect's gist_page_items and
 * brin_page_items print keys through the index's types' output functions and, for BRIN, the
 * class's opcinfo function (gistfuncs.c, brinfuncs.c).
 */
const RUNS_RELATION_CODE = {
  satisfies_hash_partition: [0],
  bt_index_check: [0],
  bt_index_parent_check: [0],
  gin_clean_pending_list: [0],
  brin_summarize_new_values: [0],
  brin_summarize_range: [0],
  gist_page_items: [1],
  brin_page_items: [1],
};

/**
 * Every other function that takes a regclass, reviewed as running none of that relation's code:
 * it reads pages, sizes, the visibility or free space map, sequence state or catalog rows
 * (pgstattuple, pg_visibility, pg_freespacemap, pageinspect's raw pages and tuple splits,
 * verify_heapam's tuple headers), removes a BRIN summary (brin_desummarize_range: the revmap
 * only), reads the relation with a query of its own (table_to_xml and its family: PG_NAMES_RELATION,
 * judged as a read of it), or is refused on every connection already (pg_prewarm, heap_force_*,
 * ...). A function of a newer server that takes a regclass and is in neither list fails the script.
 */
const RELATION_CODE_REVIEWED_NOT = [
  'brin_desummarize_range',
  'currval',
  'nextval',
  'setval',
  'hash_bitmap_info',
  'heap_force_freeze',
  'heap_force_kill',
  'heap_page_item_attrs',
  'pg_check_frozen',
  'pg_check_visible',
  'pg_column_is_updatable',
  'pg_extension_config_dump',
  'pg_freespace',
  'pg_get_replica_identity_index',
  'pg_index_column_has_property',
  'pg_index_has_property',
  'pg_indexes_size',
  'pg_nextoid',
  'pg_partition_ancestors',
  'pg_partition_root',
  'pg_partition_tree',
  'pg_prewarm',
  'pg_relation_filenode',
  'pg_relation_filepath',
  'pg_relation_is_publishable',
  'pg_relation_is_updatable',
  'pg_relation_size',
  'pg_relpages',
  'pg_sequence_last_value',
  'pg_table_size',
  'pg_total_relation_size',
  'pg_truncate_visibility_map',
  'pg_visibility',
  'pg_visibility_map',
  'pg_visibility_map_summary',
  'pgstatginindex',
  'pgstathashindex',
  'pgstatindex',
  'pgstattuple',
  'pgstattuple_approx',
  'regclassout',
  'regclasssend',
  'table_to_xml',
  'table_to_xmlschema',
  'table_to_xml_and_xmlschema',
  'verify_heapam',
];

/** Overloads that read every table of a schema named by an argument; pg_catalog holds the views that read server files. */
const NAMES_SCHEMA = {
  'schema_to_xml(name, boolean, boolean, text)': [0],
  'schema_to_xmlschema(name, boolean, boolean, text)': [0],
  'schema_to_xml_and_xmlschema(name, boolean, boolean, text)': [0],
};

/**
 * Refused on every connection, by name (all overloads), with the reason shown to the caller.
 * A name ending in `*` covers every function whose name starts so.
 */
const REFUSED = {
  'pastes-sql': [
    // Paste their text arguments into SQL they build (F.43 connectby, F.49 xpath_table), or run a cursor's query.
    'connectby',
    'xpath_table',
    'cursor_to_xml',
    'cursor_to_xmlschema',
    'dblink*',
  ],
  'host-files': [
    'pg_read_file',
    'pg_read_file_old',
    'pg_read_binary_file',
    'pg_ls_*',
    'pg_stat_file',
    'pg_file_*',
    'pg_logdir_ls',
    'pg_current_logfile',
    'pg_show_all_file_settings',
    'pg_hba_file_rules',
    'pg_ident_file_mappings',
    'pg_config',
    'lo_import',
    'lo_export',
    'xslt_process',
    'pg_get_wal_*',
    'pg_walfile_name',
    'pg_walfile_name_offset',
  ],
  'server-control': [
    'pg_cancel_backend',
    'pg_terminate_backend',
    'pg_reload_conf',
    'pg_rotate_logfile',
    'pg_rotate_logfile_old',
    'pg_promote',
    'pg_switch_wal',
    'pg_create_restore_point',
    'pg_backup_start',
    'pg_backup_stop',
    'pg_wal_replay_pause',
    'pg_wal_replay_resume',
    'pg_log_backend_memory_contexts',
    'pg_create_physical_replication_slot',
    'pg_create_logical_replication_slot',
    'pg_copy_physical_replication_slot',
    'pg_copy_logical_replication_slot',
    'pg_drop_replication_slot',
    'pg_replication_slot_advance',
    'pg_logical_slot_get_changes',
    'pg_logical_slot_get_binary_changes',
    'pg_logical_slot_peek_changes',
    'pg_logical_slot_peek_binary_changes',
    'pg_replication_origin_*',
    'pg_stat_reset*',
    'pg_stat_statements_reset',
    'pg_stat_force_next_flush',
    'pg_prewarm',
    'autoprewarm_dump_now',
    'autoprewarm_start_worker',
    'pg_truncate_visibility_map',
    'heap_force_kill',
    'heap_force_freeze',
    'binary_upgrade_*',
    'pg_stop_making_pinned_objects',
    'pg_nextoid',
    'pg_extension_config_dump',
    'pg_logical_emit_message',
  ],
  'session-state': [
    // Outlive the call on the pooled connection: the random seed, pg_trgm's threshold, exported snapshots, fdw connections.
    'set_config',
    'setseed',
    'set_limit',
    'pg_export_snapshot',
    'postgres_fdw_disconnect',
    'postgres_fdw_disconnect_all',
    'pg_advisory_*',
    'pg_try_advisory_*',
    'pg_sleep',
    'pg_sleep_for',
    'pg_sleep_until',
  ],
};

/** Volatile functions whose changes are part of the transaction: a writable connection may call them. */
const WRITES_IN_TRANSACTION = [
  'nextval',
  'setval',
  'pg_notify',
  'gin_clean_pending_list',
  'brin_summarize_new_values',
  'brin_summarize_range',
  'brin_desummarize_range',
  'pg_import_system_collations',
  'lo_close',
  'lo_creat',
  'lo_create',
  'lo_from_bytea',
  'lo_get',
  'lo_lseek',
  'lo_lseek64',
  'lo_open',
  'lo_put',
  'lo_tell',
  'lo_tell64',
  'lo_truncate',
  'lo_truncate64',
  'lo_unlink',
  'loread',
  'lowrite',
];

/**
 * Volatile functions reviewed as reads with no effect outside the call: volatile only because
 * their answer changes between calls (time, randomness, statistics, sizes, WAL positions).
 */
const VOLATILE_READS = [
  'random',
  'normal_rand',
  'clock_timestamp',
  'timeofday',
  'gen_random_uuid',
  'gen_random_bytes',
  'gen_salt',
  'pgp_pub_encrypt',
  'pgp_pub_encrypt_bytea',
  'pgp_sym_encrypt',
  'pgp_sym_encrypt_bytea',
  'uuid_generate_v1',
  'uuid_generate_v1mc',
  'uuid_generate_v4',
  'currval',
  'lastval',
  'pg_sequence_last_value',
  'current_query',
  'pg_backend_memory_contexts',
  'pg_blocking_pids',
  'pg_safe_snapshot_blocking_pids',
  'pg_isolation_test_session_is_blocked',
  'pg_collation_actual_version',
  'pg_database_collation_actual_version',
  'pg_control_checkpoint',
  'pg_control_init',
  'pg_control_recovery',
  'pg_control_system',
  'pg_current_wal_flush_lsn',
  'pg_current_wal_insert_lsn',
  'pg_current_wal_lsn',
  'pg_last_wal_receive_lsn',
  'pg_last_wal_replay_lsn',
  'pg_last_xact_replay_timestamp',
  'pg_last_committed_xact',
  'pg_is_in_recovery',
  'pg_is_wal_replay_paused',
  'pg_get_wal_replay_pause_state',
  'pg_get_backend_memory_contexts',
  'pg_get_multixact_members',
  'pg_get_shmem_allocations',
  'pg_jit_available',
  'pg_lock_status',
  'pg_notification_queue_usage',
  'pg_prepared_xact',
  'pg_partition_ancestors',
  'pg_partition_tree',
  'pg_database_size',
  'pg_tablespace_size',
  'pg_relation_size',
  'pg_table_size',
  'pg_indexes_size',
  'pg_total_relation_size',
  'pg_stat_clear_snapshot',
  'pg_stat_have_stats',
  'pg_stat_get_xact_*',
  'pg_stat_get_recovery_prefetch',
  'pg_stat_statements',
  'pg_stat_statements_info',
  'pg_xact_commit_timestamp',
  'pg_xact_commit_timestamp_origin',
  'pg_xact_status',
  'txid_status',
  'pg_old_snapshot_time_mapping',
  'pg_show_replication_origin_status',
  'pg_buffercache_pages',
  'pg_freespace',
  'pg_visibility',
  'pg_visibility_map',
  'pg_visibility_map_summary',
  'pg_check_frozen',
  'pg_check_visible',
  'pgstattuple',
  'pgstattuple_approx',
  'pgstatindex',
  'pgstatginindex',
  'pgstathashindex',
  'pg_relpages',
  'pgrowlocks',
  'bt_index_check',
  'verify_heapam',
  'ssl_*',
  'postgres_fdw_get_connections',
  // TABLESAMPLE methods: the grammar calls them, never a query (they take an internal argument).
  'system',
  'bernoulli',
  'system_rows',
  'system_time',
];

/**
 * Volatile functions that write nothing but hold, for their whole run, a lock stronger than a
 * read's ACCESS SHARE that blocks other sessions' writes to the table: maintenance checks, refused
 * on read-only connections as `LOCK TABLE ... SHARE` is. F.2 amcheck: bt_index_parent_check takes a
 * SHARE lock on the index's table (bt_index_check and verify_heapam take ACCESS SHARE only).
 */
const MAINTENANCE_LOCKS = ['bt_index_parent_check'];

/**
 * Functions that look like they could take SQL text or a relation name (by argument name or type)
 * and were reviewed as not running it: they read pages, statistics or catalogs of the relation,
 * or parse text of another language (tsquery, lquery, jsonpath, XPath).
 */
const REVIEWED_NOT_SQL = [
  'bt_metap',
  'bt_page_items',
  'bt_page_stats',
  'get_raw_page',
  'brin_page_items',
  'gist_page_items',
  'heap_page_item_attrs',
  'hash_bitmap_info',
  'pg_column_is_updatable',
  'pg_relation_is_updatable',
  'pg_relation_is_publishable',
  'pg_relation_filenode',
  'pg_relation_filepath',
  'pg_get_replica_identity_index',
  'pg_index_column_has_property',
  'pg_index_has_property',
  'pg_partition_root',
  'pg_get_publication_tables',
  'pg_get_function_sqlbody',
  'pg_prepared_statement',
  'pg_stat_get_activity',
  'pg_stat_get_progress_info',
  'pg_get_catalog_foreign_keys',
  'jsonb_path_query*',
  'database_to_xml*', // every schema but pg_catalog, information_schema and pg_*: no view that reads a server file
  'pg_sequence_parameters',
  'pg_get_serial_sequence',
  'pg_filenode_relation',
  'fmgr_sql_validator',
  'pg_describe_object',
  'pg_get_object_address',
  'pg_identify_object',
  'pg_identify_object_as_address',
  'has_*',
  'pg_has_role',
  'pg_get_expr',
  'pg_get_ruledef',
  'pg_get_triggerdef',
  'pg_get_viewdef',
  'pg_get_indexdef',
  'pg_get_constraintdef',
  'pg_get_statisticsobjdef*',
  'pg_options_to_table',
  'pg_relation_filenode',
  'amcheck*',
  'pg_visibility*',
  'pg_freespace',
  'pgstat*',
  'pg_relpages',
  'pgrowlocks',
  'bt_index*',
  'verify_heapam',
  'pg_*_size',
  'currval',
  'setval',
  'nextval',
  'gin_clean_pending_list',
  'brin_*',
  'pg_extension_config_dump',
  'pg_truncate_visibility_map',
  'pg_prewarm',
  'heap_force_*',
  'pg_partition_*',
  'pg_sequence_last_value',
  'pg_nextoid',
  'tuple_data_split',
  'gin_*',
  'gist_*',
  'hash_*',
  'pg_stat_get_*',
  'pg_stat_reset_*',
  'pg_ts_*',
  'to_tsquery',
  'plainto_tsquery',
  'phraseto_tsquery',
  'websearch_to_tsquery',
  'querytree',
  'ts_*',
  'xpath*',
  'xml*',
  'pg_import_system_collations',
  'pg_event_trigger_*',
  'pg_get_keywords',
  'pg_available_extension_versions',
  'regclassout',
  'regclasssend',
];

/**
 * Volatile functions reached without a call in the parse tree, reviewed as harmless: intagg's
 * int_array_aggregate builds its array in memory (volatile only because its state is mutated in place).
 */
const REVIEWED_HIDDEN = ['int_agg_state', 'int_agg_final_array'];

/**
 * Overloads that take a type's OID and run that type's own code, by identity signature: the
 * positions of those arguments. Source: src/backend/utils/adt/arrayfuncs.c (array_in, array_recv:
 * the element type's input or receive function, per element), rowtypes.c (record_in,
 * record_recv: each field type's), domains.c (domain_in, domain_recv: the base type's, then the
 * domain's CHECK constraints), rangetypes.c (range_in, range_recv: the subtype's, then the
 * range's canonical function), multirangetypes.c (multirange_in, multirange_recv: the range
 * type's). A person's domain CHECK, a composite's field domain or a range's canonical function
 * thus runs for a type the statement never names. hanactl answers them only for a constant that
 * names a built-in type, and its resolve step walks a constant's type like a named one.
 */
const RUNS_TYPE_CODE = {
  'array_in(cstring, oid, integer)': [1],
  'array_recv(internal, oid, integer)': [1],
  'record_in(cstring, oid, integer)': [1],
  'record_recv(internal, oid, integer)': [1],
  'domain_in(cstring, oid, integer)': [1],
  'domain_recv(internal, oid, integer)': [1],
  'range_in(cstring, oid, integer)': [1],
  'range_recv(internal, oid, integer)': [1],
  'multirange_in(cstring, oid, integer)': [1],
  'multirange_recv(internal, oid, integer)': [1],
};

/**
 * Functions that take an OID (or regtype) argument, or a type by name, reviewed as running no
 * code of the object it names, from their source in src/backend: input and receive functions
 * that read only the typmod (their own type's OID is passed: bit_in, numeric_in, timestamp_in, ...);
 * enum_in and enum_recv (a label looked up in pg_enum); the pseudo-types' range inputs (always an
 * error); format_type (prints the name; a typmod is printed by the type's typmodout, which only a
 * base type has, made by a superuser in C); catalog lookups, privileges, visibility, descriptions,
 * deparsing (pg_get_*, regtypeout), statistics (judged by their own rules), large objects, sizes, OID
 * arithmetic, pageinspect's tuple_data_split (splits raw bytes by the attributes' lengths); validators
 * of languages and foreign data wrappers (parse a body or check options, run none of it); text search parsers (ts_parse,
 * ts_token_type: a parser's functions are C, made by a superuser); amvalidate (volatile, refused
 * unreviewed); binary_upgrade_* (refused on every connection).
 */
const REVIEWED_NOT_TYPE_CODE = [
  'bit_in',
  'bit_recv',
  'bpcharin',
  'bpcharrecv',
  'varcharin',
  'varcharrecv',
  'numeric_in',
  'numeric_recv',
  'interval_in',
  'interval_recv',
  'time_in',
  'time_recv',
  'timetz_in',
  'timetz_recv',
  'timestamp_in',
  'timestamp_recv',
  'timestamptz_in',
  'timestamptz_recv',
  'varbit_in',
  'varbit_recv',
  'enum_in',
  'enum_recv',
  'anyrange_in',
  'anymultirange_in',
  'anycompatiblerange_in',
  'anycompatiblemultirange_in',
  'format_type',
  'has_*',
  'pg_has_role',
  'pg_collation_is_visible',
  'pg_conversion_is_visible',
  'pg_function_is_visible',
  'pg_opclass_is_visible',
  'pg_operator_is_visible',
  'pg_opfamily_is_visible',
  'pg_statistics_obj_is_visible',
  'pg_table_is_visible',
  'pg_ts_config_is_visible',
  'pg_ts_dict_is_visible',
  'pg_ts_parser_is_visible',
  'pg_ts_template_is_visible',
  'pg_type_is_visible',
  'regtypeout',
  'regtypesend',
  'tuple_data_split',
  'pg_get_*',
  'pg_describe_object',
  'pg_identify_object*',
  'pg_stat_*',
  'pg_collation_actual_version',
  'pg_database_collation_actual_version',
  'pg_database_size',
  'pg_tablespace_*',
  'pg_filenode_relation',
  'pg_indexam_*',
  'pg_is_other_temp_schema',
  'pg_ls_tmpdir',
  'pg_sequence_parameters',
  'row_security_active',
  'lo_*',
  'oid*',
  'btoidcmp',
  'hashoid*',
  'int8',
  'max',
  'min',
  'nameconcatoid',
  'acldefault',
  'makeaclitem',
  'amvalidate',
  'btequalimage',
  'btvarstrequalimage',
  'binary_upgrade_*',
  'fmgr_c_validator',
  'fmgr_internal_validator',
  'fmgr_sql_validator',
  'plpgsql_validator',
  'plperl_validator',
  'plperlu_validator',
  'dblink_fdw_validator',
  'file_fdw_validator',
  'postgres_fdw_validator',
  'ts_parse',
  'ts_token_type',
  'postgresql_fdw_validator',
  '_pg_*',
  'col_description',
  'obj_description',
  'shobj_description',
];

/** Takes a type or relation by OID (oid, regtype) or a type by name (an argument named `type`), callable from SQL (no `internal` argument). */
function typeCodeCandidate(fn) {
  if (/\binternal\b/.test(fn.types)) return false;
  if (/(^|, )(oid|regtype)(,|$)/.test(fn.types)) return true;
  const modes = Array.isArray(fn.argmodes) ? fn.argmodes : fn.argmodes ? String(fn.argmodes).replace(/[{}]/g, '').split(',') : [];
  return (fn.argnames ?? []).some((arg, i) => /^type(name)?$/i.test(arg) && ['i', 'b', 'v', undefined].includes(modes[i]));
}

/**
 * Where the catalogs keep secrets, and the columns that carry them ('*': every column, or the
 * function's result). Docs: 53.8 pg_authid.rolpassword, 53.57 pg_user_mapping.umoptions,
 * 53.52 pg_subscription.subconninfo, 53.51/53.53 planner statistics (sample values of every column,
 * those of pg_authid included). The functions that return other sessions' statement text (which
 * can hold `ALTER ROLE ... PASSWORD '...'` in clear) are read from pg_proc: every function with a
 * result column named `query`, and STATEMENT_TEXT_REVIEWED, whose scalar result is that text.
 */
const SECRET_RELATIONS = {
  pg_authid: ['rolpassword'],
  pg_user_mapping: ['umoptions'],
  pg_subscription: ['subconninfo'],
  pg_statistic: ['*'],
  pg_statistic_ext_data: ['*'],
};

/**
 * Server-wide counters: values that advance with any session's writes, the reason a sequence's
 * last value is refused. 9.28 sizes of the database and a tablespace (pg_database_size,
 * pg_tablespace_size: they grow as any caller inserts); 9.27.3 WAL positions
 * (pg_current_wal_lsn, _insert_lsn, _flush_lsn, and a standby's pg_last_wal_receive_lsn and
 * _replay_lsn: every write moves them); 9.27.1 transaction ids and snapshots (pg_current_snapshot,
 * txid_current_snapshot and their xmin, xmax and xip: xmax is the next transaction id, one more
 * for each writing transaction of any session; pg_current_xact_id_if_assigned,
 * txid_current_if_assigned: this transaction's id, the count of writing transactions before it;
 * pg_xact_status, txid_status: whether an id is in the past tells the counter apart;
 * pg_last_committed_xact, pg_xact_commit_timestamp(_origin): the last commit of any session and
 * when an id committed; mxid_age: the multixact counter minus a value); 9.27.10 pg_control_*
 * (the checkpoint's next transaction id and OID, the control file's last change). Functions of
 * this kind (SERVER_COUNTER_KIND) that are neither must be reviewed (SERVER_COUNTERS_REVIEWED_NOT).
 */
const SERVER_COUNTERS = [
  'pg_database_size',
  'pg_tablespace_size',
  'pg_current_wal_lsn',
  'pg_current_wal_insert_lsn',
  'pg_current_wal_flush_lsn',
  'pg_last_wal_receive_lsn',
  'pg_last_wal_replay_lsn',
  'pg_current_snapshot',
  'pg_snapshot_xmin',
  'pg_snapshot_xmax',
  'pg_snapshot_xip',
  'txid_current_snapshot',
  'txid_snapshot_xmin',
  'txid_snapshot_xmax',
  'txid_snapshot_xip',
  'pg_current_xact_id_if_assigned',
  'txid_current_if_assigned',
  'pg_xact_status',
  'txid_status',
  'pg_last_committed_xact',
  'pg_xact_commit_timestamp',
  'pg_xact_commit_timestamp_origin',
  'mxid_age',
  'pg_control_checkpoint',
  'pg_control_system',
  'pg_control_init',
  'pg_control_recovery',
];

/**
 * A built-in function that may report a server-wide counter: it returns a WAL position, a
 * transaction id or a snapshot, or its name speaks of sizes, WAL positions, transaction ids,
 * commits, ages or the control file. Each is reviewed: a counter (SERVER_COUNTERS) or not.
 */
const SERVER_COUNTER_TYPES = new Set(['pg_lsn', 'xid', 'xid8', 'txid_snapshot', 'pg_snapshot']);
const SERVER_COUNTER_WORDS = /size|lsn|xid|xact|snapshot|commit|(^|_)age$|control/;

/**
 * Functions of that kind reviewed as no server-wide counter: values computed from their
 * arguments alone (sizes of a value or text, LSN and xid arithmetic, conversions, comparisons),
 * what is refused on every connection or by other rules (WAL switches and restore points, logical
 * messages, replication origins, backups, relation sizes: executor statistics above), this
 * transaction's own snapshot kept in a value (pg_visible_in_snapshot, txid_visible_in_snapshot:
 * whether an id the caller gives is visible), the xid type's I/O and comparisons, advisory locks
 * and the logical snapshot folder (refused on every connection), and the clock. age(xid) counts too, but shares its
 * name with age(timestamp), which the rules cannot tell apart by name: not covered (SECURITY.md).
 */
const SERVER_COUNTERS_REVIEWED_NOT = [
  'age',
  'pg_column_size',
  'pg_column_compression',
  'pg_size_pretty',
  'pg_size_bytes',
  'pg_wal_lsn_diff',
  'pg_lsn*',
  'numeric_pl_pg_lsn',
  'xid*',
  'max',
  'min',
  'brin_minmax_multi_distance_pg_lsn',
  'pg_notification_queue_usage',
  'pg_switch_wal',
  'pg_create_restore_point',
  'pg_backup_start',
  'pg_backup_stop',
  'pg_logical_emit_message',
  'pg_replication_origin_*',
  'pg_relation_size',
  'pg_table_size',
  'pg_indexes_size',
  'pg_total_relation_size',
  'pg_visible_in_snapshot',
  'txid_visible_in_snapshot',
  'pg_current_xact_id',
  'txid_current',
  'pg_export_snapshot',
  'pg_stat_clear_snapshot',
  'pg_get_wal_*',
  'pg_walfile_name*',
  'pg_last_xact_replay_timestamp',
  'pg_stat_get_snapshot_timestamp',
  'pg_safe_snapshot_blocking_pids',
  'pg_stat_reset_single_table_counters',
  'pg_import_system_collations',
  'pg_advisory_*',
  'pg_try_advisory_*',
  'pg_ls_logicalsnapdir',
];

/**
 * Executor statistics: what statements did, counted below row-level security, so on a connection
 * that separates rows a search on them recovers the rows it hides (refused there only). Docs 28.2:
 * the cumulative statistics functions (`pg_stat_get_*`: tuples and index entries read, blocks hit,
 * calls, per relation, index, function and database, the `_xact_` forms with this backend's
 * pending counts, which carry over between calls on a pooled backend), `pg_stat_have_stats`; the
 * lock manager's state (9.26 pg_lock_status behind pg_locks: under SERIALIZABLE a scan takes a
 * predicate lock on each tuple it fetches before the policy removes it, and the view lists which
 * tuples other sessions read; pg_blocking_pids, pg_safe_snapshot_blocking_pids and
 * pg_isolation_test_session_is_blocked, which other sessions wait on; pg_get_multixact_members, who
 * holds a row's shared locks; pg_prepared_xact behind pg_prepared_xacts, other sessions' prepared
 * transactions); and every function of the extensions that count executor work or read storage
 * below the policy: F.32 pg_stat_statements (rows and blocks per statement), F.25 pg_buffercache
 * (which pages a statement loaded), F.24 pageinspect (raw tuples), F.33 pgstattuple, F.29
 * pg_visibility and F.27 pg_freespacemap (per page figures), F.31 pgrowlocks (locks on rows, and who
 * holds them), F.2 amcheck (every tuple and index entry, whatever the policy), F.35 pg_walinspect
 * (the WAL: what every session wrote). Counters of every session's work are in the same class:
 * 9.17 pg_sequence_last_value behind pg_sequences (a sequence's last value moves with every
 * caller's inserts; the sequence read as a relation is refused by the resolve step), and 9.28
 * relation sizes (pg_relation_size, pg_table_size, pg_indexes_size, pg_total_relation_size): of a
 * partition or a partial index made per customer they are that customer's share of the table,
 * as its row estimate is (pg_class.reltuples, refused there too). Server-wide counters that
 * advance with every session's writes are the same oracle, only coarser: a count before and after
 * a write the caller cannot see tells that it happened (SERVER_COUNTERS).
 */
const EXECUTOR_STATISTICS = {
  names: [
    'pg_stat_get_*',
    'pg_stat_have_stats',
    'pg_lock_status',
    'pg_blocking_pids',
    'pg_safe_snapshot_blocking_pids',
    'pg_isolation_test_session_is_blocked',
    'pg_get_multixact_members',
    'pg_prepared_xact',
    'pg_sequence_last_value',
    'pg_relation_size',
    'pg_table_size',
    'pg_indexes_size',
    'pg_total_relation_size',
    ...SERVER_COUNTERS,
  ],
  extensions: [
    'pg_stat_statements',
    'pg_buffercache',
    'pageinspect',
    'pgstattuple',
    'pg_visibility',
    'pg_freespacemap',
    'pgrowlocks',
    'amcheck',
    'pg_walinspect',
  ],
};

/**
 * Every other extension the server offers, reviewed as counting nothing a statement did and reading
 * no storage below row-level security: data types, operators and index support (btree_gin, cube,
 * hstore, ltree, ...), text search dictionaries, trigger functions (autoinc, moddatetime, refint,
 * tcn, insert_username), procedural languages and their type transforms (where the server offers
 * them), sampling methods, foreign data wrappers and links (judged elsewhere), host files
 * (adminpack: refused on every connection), the buffer prewarmer, heap surgery (refused),
 * xid-to-time mapping (old_snapshot) and the TLS details of this session (sslinfo). An extension
 * of a newer server in neither list fails the script.
 */
const EXTENSIONS_REVIEWED_NOT_STATISTICS = [
  'adminpack',
  'autoinc',
  'bloom',
  'btree_gin',
  'btree_gist',
  'citext',
  'cube',
  'dblink',
  'dict_int',
  'dict_xsyn',
  'earthdistance',
  'file_fdw',
  'fuzzystrmatch',
  'hstore',
  'insert_username',
  'intagg',
  'intarray',
  'isn',
  'lo',
  'ltree',
  'moddatetime',
  'old_snapshot',
  'pg_prewarm',
  'pg_surgery',
  'pg_trgm',
  'pgcrypto',
  'plpgsql',
  'plperl',
  'plperlu',
  'bool_plperl',
  'bool_plperlu',
  'hstore_plperl',
  'hstore_plperlu',
  'jsonb_plperl',
  'jsonb_plperlu',
  'plpython3u',
  'hstore_plpython3u',
  'jsonb_plpython3u',
  'ltree_plpython3u',
  'pltcl',
  'pltclu',
  'postgres_fdw',
  'refint',
  'seg',
  'sslinfo',
  'tablefunc',
  'tcn',
  'tsm_system_rows',
  'tsm_system_time',
  'unaccent',
  'uuid-ossp',
  'xml2',
];

/**
 * Functions of the statistics system (a `pg_stat` name or C symbol) reviewed as no executor
 * statistics: a snapshot reset, files on the host, the reset and flush functions (refused on every
 * connection), the extended statistics' visibility and MCV list (read from refused catalogs).
 */
const STATISTICS_REVIEWED_NOT_COUNTERS = [
  'pg_stat_clear_snapshot',
  'pg_stat_file',
  'pg_stat_force_next_flush',
  'pg_stat_reset*',
  'pg_statistics_obj_is_visible',
  'pg_mcv_list_items',
];

/**
 * Built-in functions whose name or C symbol speaks of locks, blocks, snapshots or transactions
 * (LOCK_STATE_WORDS), reviewed as reporting no lock state another scan or session left: advisory
 * locks (refused on every connection), this transaction's own id (refused as a write) and an
 * exported snapshot (refused), the standby's replay time, replication origins (refused), the
 * clock. Snapshots, a transaction's fate or commit time by its id and the last commit are
 * server-wide counters (SERVER_COUNTERS).
 */
const LOCK_STATE_REVIEWED_NOT_COUNTERS = [
  'clock_timestamp',
  'pg_advisory_*',
  'pg_try_advisory_*',
  'pg_current_xact_id',
  'pg_export_snapshot',
  'txid_*',
  'pg_visible_in_snapshot',
  'pg_last_xact_replay_timestamp',
  'pg_replication_origin_xact_*',
  'pg_prepared_statement',
];

/** A built-in function's name or C symbol that may report lock-manager or transaction state. */
const LOCK_STATE_WORDS = /lock|block|snapshot|xact|isolation|multixact/;

/** 28.2.3 pg_stat_get_backend_activity(backend): the text of that backend's current or last statement. */
const STATEMENT_TEXT_REVIEWED = ['pg_stat_get_backend_activity'];

// ---- Reading the server ----

const matcher = (patterns) => {
  const exact = new Set(patterns.filter((p) => !p.endsWith('*')));
  const prefixes = patterns.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p));
};

/** Looks like it could take SQL text or a relation name: an argument named so, or of such a type, or a body with EXECUTE. */
function candidate(fn) {
  const argNames = (fn.argnames ?? []).join(' ');
  const types = fn.types;
  if (/\b(sql|query|sqlquery|select|relname|relation|criteria|tbl|schema|cursor|source_sql|category_sql)\b/i.test(argNames)) return true;
  if (/\b(regclass|refcursor)\b/.test(types)) return true;
  if (['sql', 'plpgsql'].includes(fn.lang) && /\bEXECUTE\b/i.test(fn.prosrc ?? '')) return true;
  return /(_to_xml|crosstab|connectby|xpath_table|dblink)/.test(fn.name);
}

async function readServer() {
  const admin = new pg.Client({ connectionString: URL_ });
  await admin.connect();
  const scratch = `hanactl_pgfn_${process.pid}`;
  // The major version only: minor releases do not add or change functions.
  const version = String(Math.floor(Number((await admin.query('SHOW server_version_num')).rows[0].server_version_num) / 10000));
  const extensions = (await admin.query('SELECT name FROM pg_available_extensions ORDER BY name')).rows.map((r) => r.name);
  await admin.query(`CREATE DATABASE ${scratch}`);
  const u = new URL(URL_);
  u.pathname = `/${scratch}`;
  const db = new pg.Client({ connectionString: u.toString() });
  try {
    await db.connect();
    for (const name of extensions) await db.query(`CREATE EXTENSION IF NOT EXISTS "${name}" CASCADE`);
    const functions = (
      await db.query(`
        SELECT p.proname AS name, p.provolatile AS volatile, p.pronargs::int AS nargs, p.pronargdefaults::int AS ndefaults,
               p.provariadic <> 0 AS variadic, pg_catalog.oidvectortypes(p.proargtypes) AS types,
               p.proargnames AS argnames, p.proargmodes AS argmodes, l.lanname AS lang, p.prosrc,
               pg_catalog.format_type(p.prorettype, NULL) AS returns,
               (SELECT e.extname FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
                 WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e') AS extension
          FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang
         WHERE p.prokind IN ('f', 'a', 'w')
         ORDER BY 1, 6`)
    ).rows;
    const views = (
      await db.query(`
        SELECT c.relname AS name, pg_catalog.pg_get_viewdef(c.oid) AS def
          FROM pg_catalog.pg_class c WHERE c.relkind IN ('v', 'm') ORDER BY 1`)
    ).rows;
    // What each view's stored rules call and read (every function a node names by OID, every
    // relation), as the server recorded them in pg_rewrite; pg_depend has no rows for what initdb pins.
    const rules = (
      await db.query(`
        SELECT c.relname AS name,
               pg_catalog.array_remove(pg_catalog.array_agg(DISTINCT p.proname::text), NULL) AS calls,
               pg_catalog.array_remove(pg_catalog.array_agg(DISTINCT r.relname::text), NULL) AS reads
          FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_class c ON c.oid = w.ev_class
         CROSS JOIN LATERAL pg_catalog.regexp_matches(w.ev_action::text, ':(funcid|opfuncid|aggfnoid|winfnoid|relid) (\\d+)', 'g') AS m
          LEFT JOIN pg_catalog.pg_proc p ON m[1] <> 'relid' AND p.oid = m[2]::oid
          LEFT JOIN pg_catalog.pg_class r ON m[1] = 'relid' AND r.oid = m[2]::oid AND r.oid <> c.oid
         WHERE c.relkind IN ('v', 'm')
         GROUP BY c.relname ORDER BY 1`)
    ).rows;
    // Calls the parse tree does not show as a function call: operators, casts, type I/O, aggregates'
    // support functions, and attribute notation (t.f for f(t), one argument of a row type). None may
    // reach a volatile function that is not reviewed (REVIEWED_HIDDEN).
    const hidden = (
      await db.query(`
        SELECT 'operator ' || o.oprname || ' runs ' || p.proname AS what FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode WHERE p.provolatile = 'v'
        UNION ALL SELECT 'cast ' || c.castsource::regtype || ' -> ' || c.casttarget::regtype || ' runs ' || p.proname FROM pg_catalog.pg_cast c JOIN pg_catalog.pg_proc p ON p.oid = c.castfunc WHERE p.provolatile = 'v'
        UNION ALL SELECT 'type ' || t.typname || ' runs ' || p.proname FROM pg_catalog.pg_type t JOIN pg_catalog.pg_proc p
            ON p.oid IN (t.typinput, t.typoutput, t.typreceive, t.typsend, t.typmodin, t.typmodout, t.typanalyze, t.typsubscript) WHERE p.provolatile = 'v'
        UNION ALL SELECT 'aggregate ' || a.aggfnoid::regproc || ' runs ' || p.proname FROM pg_catalog.pg_aggregate a JOIN pg_catalog.pg_proc p
            ON p.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn)
         WHERE p.provolatile = 'v'
        UNION ALL SELECT 'attribute notation reaches ' || p.proname FROM pg_catalog.pg_proc p
         WHERE p.pronargs = 1 AND p.provolatile = 'v' AND p.proargtypes[0] IN ('record'::regtype, 'anyelement'::regtype, 'anycompatible'::regtype)
        ORDER BY 1`)
    ).rows
      .map((r) => r.what)
      .filter((what) => !REVIEWED_HIDDEN.some((name) => what.endsWith(` runs ${name}`)));
    // The built-in base, pseudo, enum, range and domain types by name (no array or row types): what a
    // constant handed to a type-dispatching function (RUNS_TYPE_CODE) may name.
    const types = (
      await db.query(`SELECT t.typname AS name FROM pg_catalog.pg_type t
         WHERE t.oid < 16384 AND t.typrelid = 0 AND t.typname !~ '^_' ORDER BY 1`)
    ).rows.map((r) => r.name);
    return { version, extensions, functions, views, rules, hidden, types };
  } finally {
    await db.end().catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${scratch}`);
    await admin.end();
  }
}

// ---- Classifying ----

export function classify({ version, extensions, functions, hidden = [], types = [] }) {
  const names = new Set(functions.map((f) => f.name));
  const problems = hidden.map((what) => `${what}, a volatile function the checks would not see called`);
  const bySignature = new Map(functions.map((f) => [`${f.name}(${f.types})`, f]));
  const positions = (table) => {
    const out = {};
    for (const [signature, args] of Object.entries(table)) {
      const fn = bySignature.get(signature);
      if (!fn) {
        problems.push(`reviewed ${signature} is not in pg_proc`);
        continue;
      }
      const arities = fn.variadic ? [] : Array.from({ length: fn.ndefaults + 1 }, (_, i) => fn.nargs - i);
      out[fn.name] ??= {};
      for (const n of arities) out[fn.name][n] = args;
    }
    return out;
  };
  const runsSql = positions(RUNS_SQL);
  const namesRelation = positions(NAMES_RELATION);
  const namesSchema = positions(NAMES_SCHEMA);
  // By name, for every overload: each must be the reviewed one (a variadic one has no fixed arity).
  const byName = (table) => {
    const out = {};
    for (const [signature, args] of Object.entries(table)) {
      const fn = bySignature.get(signature);
      if (!fn) {
        problems.push(`reviewed ${signature} is not in pg_proc`);
        continue;
      }
      out[fn.name] = args;
      for (const other of functions)
        if (other.name === fn.name && `${other.name}(${other.types})` !== signature)
          problems.push(`${other.name}(${other.types}) shares its name with reviewed ${signature} and is not reviewed`);
    }
    return out;
  };

  const refused = {};
  for (const [reason, patterns] of Object.entries(REFUSED)) {
    const is = matcher(patterns);
    for (const p of patterns) if (!p.endsWith('*') && !names.has(p)) problems.push(`reviewed ${p} is not in pg_proc`);
    for (const name of [...names].sort()) if (is(name) && !(name in refused)) refused[name] = reason;
  }
  const isRead = matcher(VOLATILE_READS);
  const isWrite = matcher(WRITES_IN_TRANSACTION);
  const isMaintenance = matcher(MAINTENANCE_LOCKS);
  for (const p of MAINTENANCE_LOCKS) if (!names.has(p)) problems.push(`reviewed ${p} is not in pg_proc`);
  const sqlNames = new Set([...Object.keys(runsSql), ...Object.keys(namesRelation), ...Object.keys(namesSchema)]);
  // Functions whose SQL or relation arguments are checked are judged by that check, not by their volatility.
  const volatileNames = [...new Set(functions.filter((f) => f.volatile === 'v' && !sqlNames.has(f.name)).map((f) => f.name))].sort();
  const allowedVolatile = volatileNames.filter((n) => !(n in refused) && isRead(n));
  const writes = volatileNames.filter((n) => !(n in refused) && !isRead(n) && isWrite(n));
  const maintenance = volatileNames.filter((n) => !(n in refused) && !isRead(n) && !isWrite(n) && isMaintenance(n));
  const unreviewedVolatile = volatileNames.filter((n) => !(n in refused) && !isRead(n) && !isWrite(n) && !isMaintenance(n));

  const reviewed = matcher([...REVIEWED_NOT_SQL, ...Object.values(REFUSED).flat()]);
  const unreviewedCandidates = [
    ...new Set(
      functions
        .filter(
          (f) =>
            candidate(f) && !sqlNames.has(f.name) && !reviewed(f.name) && !isRead(f.name) && !isWrite(f.name) && !isMaintenance(f.name),
        )
        .filter((f) => !/\binternal\b/.test(f.types) && !f.name.endsWith('_in') && !f.name.endsWith('_out'))
        .map((f) => `${f.name}(${f.types})`),
    ),
  ];
  for (const c of unreviewedCandidates) problems.push(`${c} may take SQL text or a relation name and is not reviewed`);
  const runsRelationCode = relationCode(functions, problems);
  const runsTypeCode = byName(RUNS_TYPE_CODE);
  // satisfies_hash_partition takes its relation as an oid: reviewed with the relation-code functions.
  const reviewedTypeCode = matcher([...REVIEWED_NOT_TYPE_CODE, ...Object.keys(runsTypeCode), ...Object.keys(runsRelationCode)]);
  for (const f of functions)
    if (typeCodeCandidate(f) && !reviewedTypeCode(f.name))
      problems.push(`${f.name}(${f.types}) takes a type or relation by OID or name and is not reviewed as running its code or not`);
  // Every pg_* name the server has: a pg_* function it lacks is one of a newer server, not classified here.
  const pgNames = [...names].filter((n) => n.startsWith('pg_')).sort();
  return {
    version,
    extensions,
    runsSql,
    namesRelation,
    namesSchema,
    runsTypeCode,
    runsRelationCode,
    builtinTypes: types,
    refused,
    allowedVolatile,
    writes,
    maintenance,
    unreviewedVolatile,
    pgNames,
    problems,
  };
}

/**
 * The functions that run a relation's own code (RUNS_RELATION_CODE) as name -> relation argument
 * positions; pushes onto `problems` a reviewed name the server lacks, an overload whose argument
 * at a reviewed position is not a relation (regclass or oid), and every function with a regclass
 * argument reviewed in neither list.
 */
function relationCode(functions, problems) {
  const reviewedNot = new Set(RELATION_CODE_REVIEWED_NOT);
  const out = {};
  for (const [name, positions] of Object.entries(RUNS_RELATION_CODE)) {
    const overloads = functions.filter((f) => f.name === name);
    if (overloads.length === 0) {
      problems.push(`reviewed ${name} is not in pg_proc`);
      continue;
    }
    for (const f of overloads)
      for (const p of positions)
        if (!['regclass', 'oid'].includes(f.types.split(', ')[p])) problems.push(`${name}(${f.types}) takes no relation at position ${p}`);
    out[name] = positions;
  }
  for (const f of functions) {
    if (!f.types.split(', ').includes('regclass') || f.name in RUNS_RELATION_CODE || reviewedNot.has(f.name)) continue;
    problems.push(`${f.name}(${f.types}) takes a relation and is not reviewed as running its code (operator classes, expressions) or not`);
  }
  return out;
}

/** Functions whose result holds other sessions' statement text: a result column named `query`, or reviewed. */
export function statementTextFunctions(functions) {
  const names = new Set(STATEMENT_TEXT_REVIEWED);
  for (const f of functions) {
    // pg returns a "char"[] as its text form, {i,o,o}.
    const modes = Array.isArray(f.argmodes)
      ? f.argmodes
      : String(f.argmodes ?? '')
          .replace(/[{}]/g, '')
          .split(',');
    (f.argnames ?? []).forEach((arg, i) => {
      if (arg === 'query' && ['o', 't', 'b'].includes(modes[i])) names.add(f.name);
    });
  }
  return [...names].sort();
}

/**
 * The executor statistics functions (EXECUTOR_STATISTICS) on this server, by name; and as problems,
 * every other function of the statistics system (a `pg_stat` name or C symbol) or built-in function
 * that may report lock state (LOCK_STATE_WORDS) or a server-wide counter (SERVER_COUNTER_TYPES,
 * SERVER_COUNTER_WORDS) nobody reviewed, and with `available` (the server's
 * pg_available_extensions) every extension reviewed in neither list, so that a release's new
 * counters cannot pass unnoticed.
 */
export function executorStatistics(functions, available) {
  const isCounter = matcher(EXECUTOR_STATISTICS.names);
  const extensions = new Set(EXECUTOR_STATISTICS.extensions);
  const reviewed = matcher(STATISTICS_REVIEWED_NOT_COUNTERS);
  const reviewedLocks = matcher(LOCK_STATE_REVIEWED_NOT_COUNTERS);
  const reviewedServerCounters = matcher(SERVER_COUNTERS_REVIEWED_NOT);
  const names = new Set();
  const problems = new Set();
  for (const f of functions) {
    const builtin = ['internal', 'c'].includes(f.lang);
    if (isCounter(f.name) || extensions.has(f.extension)) names.add(f.name);
    else if (/^pg_stat/.test(f.name) || (builtin && /^pg_stat/.test(f.prosrc ?? ''))) {
      if (!reviewed(f.name))
        problems.add(`${f.name}(${f.types}) belongs to the statistics system and is not reviewed as executor statistics or not`);
    } else if (builtin && !f.extension && (LOCK_STATE_WORDS.test(f.name) || LOCK_STATE_WORDS.test(f.prosrc ?? ''))) {
      if (!reviewedLocks(f.name) && !/_(in|out|recv|send)$/.test(f.name))
        problems.add(`${f.name}(${f.types}) may report lock or transaction state and is not reviewed as executor statistics or not`);
    }
    if (builtin && !f.extension && !isCounter(f.name) && (SERVER_COUNTER_TYPES.has(f.returns) || SERVER_COUNTER_WORDS.test(f.name))) {
      if (!reviewedServerCounters(f.name) && !/_(in|out|recv|send)$/.test(f.name))
        problems.add(`${f.name}(${f.types}) may report a server-wide counter and is not reviewed as executor statistics or not`);
    }
  }
  for (const e of extensions)
    if (!functions.some((f) => f.extension === e)) problems.add(`reviewed extension ${e} has no functions on the server`);
  const notStatistics = new Set(EXTENSIONS_REVIEWED_NOT_STATISTICS);
  for (const e of available ?? [])
    if (!extensions.has(e) && !notStatistics.has(e))
      problems.add(`extension ${e} is not reviewed as executor statistics (counts what statements did, reads storage) or not`);
  return { names: [...names].sort(), problems: [...problems] };
}

/**
 * Views whose stored rules call an executor statistics function, directly or through other views,
 * to any depth (`rules`: each view's calls and reads from pg_rewrite): view -> the function.
 */
export function executorStatisticsViews(rules, counters) {
  const reached = new Map(counters.map((name) => [name, name]));
  const out = {};
  for (let changed = true; changed; ) {
    changed = false;
    for (const view of rules) {
      if (view.name in out) continue;
      const via = [...view.calls, ...view.reads].find((name) => reached.has(name));
      if (via === undefined) continue;
      out[view.name] = reached.get(via);
      reached.set(view.name, reached.get(via));
      changed = true;
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

const isObject = (v) => typeof v === 'object' && v !== null;

/** What a view's definition reads and shows, from PostgreSQL's parser. */
function viewParts(def) {
  const reads = new Set();
  const allColumns = [];
  let star = false;
  const stack = [parseSync(def)];
  const targets = [];
  const fromFunctions = [];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!isObject(node)) continue;
    for (const [key, child] of Object.entries(node)) {
      if (key === 'RangeFunction') fromFunctions.push(child);
      if (key === 'RangeVar' && typeof child.relname === 'string') reads.add(child.relname);
      if (key === 'FuncCall') reads.add(child.funcname.at(-1).String.sval);
      if (key === 'ColumnRef') {
        const last = child.fields.at(-1);
        if (last.A_Star) star = true;
        else allColumns.push(last.String.sval);
      }
      if (key === 'ResTarget') targets.push(child);
      if (isObject(child)) stack.push(child);
    }
  }
  return { reads, allColumns, star, targets, fromFunctions };
}

/** The column names and stars under one node. */
function columnsUnder(root) {
  const names = [];
  let star = false;
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!isObject(node)) continue;
    for (const [key, child] of Object.entries(node)) {
      if (key === 'ColumnRef') {
        const last = child.fields.at(-1);
        if (last.A_Star) star = true;
        else names.push(last.String.sval);
      }
      if (isObject(child)) stack.push(child);
    }
  }
  return { names, star };
}

/**
 * Views that show a secret (SECRET_RELATIONS, or a statement-text function's `query`), directly or
 * through other views, to any depth: view -> the catalog or function the secret comes from. Each
 * definition is read with PostgreSQL's parser; a view is a source in turn for the columns it
 * shows that carry the secret (pg_shadow.passwd, _pg_user_mappings.umoptions), so a view that
 * shows a constant in their place (pg_roles, pg_user) is not one.
 */
export function secretViews(views, textFunctions) {
  const secret = new Map(Object.entries(SECRET_RELATIONS).map(([k, v]) => [k, { columns: new Set(v), from: k }]));
  for (const f of textFunctions) secret.set(f, { columns: new Set(f === 'pg_stat_get_backend_activity' ? ['*'] : ['query']), from: f });
  const parts = views.map((v) => ({ name: v.name, ...viewParts(v.def) }));
  const out = {};
  for (let changed = true; changed; ) {
    changed = false;
    for (const view of parts) {
      if (view.name in out) continue;
      const sources = [...view.reads].filter((r) => secret.has(r)).map((r) => secret.get(r));
      if (sources.length === 0) continue;
      const shown = new Set();
      let from;
      for (const source of sources) {
        const before = shown.size;
        const carried = source.columns;
        for (const target of view.targets) {
          const under = columnsUnder(target.val);
          const name = target.name ?? under.names.at(-1);
          if (carried.has('*') || under.names.some((n) => carried.has(n))) shown.add(name);
          if (under.star) for (const c of carried) shown.add(c);
        }
        // A FROM-clause function over a secret column (pg_options_to_table(um.umoptions)) passes it to
        // every column it returns: the view shows a secret wherever it shows one of those.
        if (view.fromFunctions.some((f) => columnsUnder(f).names.some((n) => carried.has(n))))
          for (const target of view.targets) shown.add(target.name ?? columnsUnder(target.val).names.at(-1));
        shown.delete(undefined);
        if (shown.size > before) from ??= source.from;
      }
      if (shown.size === 0) continue;
      out[view.name] = from;
      secret.set(view.name, { columns: shown, from });
      changed = true;
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Views that read through a function refused for reading server files (pg_file_settings, pg_hba_file_rules, ...). */
export function deniedRelations(views, refused) {
  const fileReaders = Object.entries(refused)
    .filter(([, why]) => why === 'host-files')
    .map(([n]) => n);
  const out = {};
  for (const view of views) {
    const hit = fileReaders.find((f) => new RegExp(`\\b${f}\\(`).test(view.def));
    if (hit) out[view.name] = hit;
  }
  return out;
}

const list = (items) => `[\n${items.map((i) => `  ${JSON.stringify(i)},`).join('\n')}\n]`;
const record = (obj) =>
  `{\n${Object.entries(obj)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},`)
    .join('\n')}\n}`;

export function render(c, relations, secrets = { views: {}, textFunctions: [] }, statistics = { functions: [], views: {} }) {
  const major = c.version;
  return `// Generated by \`${REGENERATE}\` from pg_proc of PostgreSQL ${major} with
// every extension it offers installed. Do not edit: change the reviewed lists in the script and
// regenerate. test/integration/pg-functions-current.test.ts fails when this file is out of date.

/** The PostgreSQL major version this file was generated from. */
export const PG_FUNCTIONS_SERVER_MAJOR = ${JSON.stringify(major)};

/** The extensions installed when generating (their functions are classified too). */
export const PG_FUNCTIONS_EXTENSIONS: readonly string[] = ${list(c.extensions)};

/** Functions that run a text argument as SQL: name -> number of arguments -> positions of the SQL arguments. */
export const PG_RUNS_SQL: Readonly<Record<string, Readonly<Record<number, readonly number[]>>>> = ${record(c.runsSql)};

/** Functions that read the table named by an argument: name -> number of arguments -> positions. */
export const PG_NAMES_RELATION: Readonly<Record<string, Readonly<Record<number, readonly number[]>>>> = ${record(c.namesRelation)};

/** Functions that read every table of the schema named by an argument: name -> number of arguments -> positions. */
export const PG_NAMES_SCHEMA: Readonly<Record<string, Readonly<Record<number, readonly number[]>>>> = ${record(c.namesSchema)};

/**
 * Functions that run the own code of the type whose OID an argument gives (array_in, domain_in:
 * input functions, domain CHECK constraints, range canonical functions): name -> positions of those arguments.
 */
export const PG_RUNS_TYPE_CODE: Readonly<Record<string, readonly number[]>> = ${record(c.runsTypeCode ?? {})};

/**
 * The types initdb makes, by name, other than arrays and row types (_int4 and int4[] are the arrays
 * of these): a type-dispatching function is answered for a constant naming one.
 */
export const PG_BUILTIN_TYPES: readonly string[] = ${list(c.builtinTypes ?? [])};

/**
 * Functions that run code the server keeps beside the relation an argument names (operator classes,
 * index expressions and predicates, a partition key's support functions): name -> positions of
 * those arguments, for every overload.
 */
export const PG_RUNS_RELATION_CODE: Readonly<Record<string, readonly number[]>> = ${record(c.runsRelationCode ?? {})};

/** Refused on every connection, with why. */
export const PG_REFUSED: Readonly<Record<string, 'pastes-sql' | 'host-files' | 'server-control' | 'session-state'>> = ${record(c.refused)};

/** Volatile functions reviewed as reads with no effect outside the call. */
export const PG_VOLATILE_READS: readonly string[] = ${list(c.allowedVolatile)};

/** Volatile functions whose changes belong to the transaction: refused on read-only connections only. */
export const PG_VOLATILE_WRITES: readonly string[] = ${list(c.writes)};

/** Volatile functions that hold a lock blocking other sessions' writes while they run (maintenance checks): refused on read-only connections only. */
export const PG_MAINTENANCE_LOCKS: readonly string[] = ${list(c.maintenance ?? [])};

/** Volatile functions nobody reviewed (internal, trigger, validator and handler functions mostly): refused on every connection. */
export const PG_VOLATILE_UNREVIEWED: readonly string[] = ${list(c.unreviewedVolatile)};

/** Every function name starting with pg_ on this server: another pg_* function belongs to a server this file does not describe. */
export const PG_KNOWN_PG_NAMES: readonly string[] = ${list(c.pgNames)};

/** Views that read server files through a refused function: view -> that function. */
export const PG_DENIED_RELATIONS: Readonly<Record<string, string>> = ${record(relations)};

/** Functions whose result holds other sessions' statement text (a \`query\` result column): refused on every connection. */
export const PG_STATEMENT_TEXT_FUNCTIONS: readonly string[] = ${list(secrets.textFunctions)};

/**
 * Views, in any schema of a fresh server with every extension, that show a password, a mapping's
 * options, planner statistics or other sessions' statement text, directly or through other views:
 * view -> the catalog or function the secret comes from.
 */
export const PG_SECRET_VIEWS: Readonly<Record<string, string>> = ${record(secrets.views)};

/**
 * Executor statistics: functions whose answer counts what statements did below row-level security
 * (tuples, index entries, blocks, calls) or reads storage below it: refused where rows are separated.
 */
export const PG_EXECUTOR_STATISTICS: readonly string[] = ${list(statistics.functions)};

/** Views that call an executor statistics function, directly or through other views (from pg_rewrite): view -> that function. */
export const PG_EXECUTOR_STATISTICS_VIEWS: Readonly<Record<string, string>> = ${record(statistics.views)};
`;
}

export async function generate() {
  const server = await readServer();
  const c = classify(server);
  await loadModule();
  const textFunctions = statementTextFunctions(server.functions);
  const views = secretViews(server.views, textFunctions);
  const counters = executorStatistics(server.functions, server.extensions);
  const statistics = { functions: counters.names, views: executorStatisticsViews(server.rules, counters.names) };
  const raw = render(c, deniedRelations(server.views, c.refused), { views, textFunctions }, statistics);
  // In the repository's own format, so that the committed file is byte for byte what this writes.
  const text = execFileSync(join(ROOT, 'node_modules/.bin/biome'), ['format', `--stdin-file-path=${OUT}`], {
    input: raw,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  return { text, problems: [...c.problems, ...counters.problems], version: server.version };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { text, problems, version } = await generate();
  if (problems.length > 0) {
    console.error(`The classification of PostgreSQL ${version}'s functions needs a review:\n  ${problems.join('\n  ')}`);
    console.error('Add each to the reviewed lists in scripts/policy/pg-functions.mjs (see the PostgreSQL documentation of the function).');
    process.exit(1);
  }
  if (process.argv.includes('--check')) {
    const committed = readFileSync(OUT, 'utf8');
    if (committed !== text) {
      console.error(`daemon/policy/pg-functions.generated.ts is out of date for PostgreSQL ${version}. Regenerate it with: ${REGENERATE}`);
      process.exit(1);
    }
    console.log(`daemon/policy/pg-functions.generated.ts matches PostgreSQL ${version}.`);
  } else {
    writeFileSync(OUT, text);
    console.log(`Wrote daemon/policy/pg-functions.generated.ts from PostgreSQL ${version}.`);
  }
}
