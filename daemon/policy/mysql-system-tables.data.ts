/**
 * Every table, view and function of the MySQL/MariaDB system schemas that hanactl has reviewed,
 * with where it may be read and why (MariaDB 10.11's catalog with the information_schema plugins
 * it ships installed; test/integration/status-counters-current.test.ts fails on a name of the
 * live catalog missing here). A name not listed is refused on every connection.
 *
 * - `everywhere`: catalog data the caller's own privileges already filter, server settings, or the
 *   caller's own session; reading it changes nothing.
 * - `unseparated`: counts or times the work of every session (rows and index entries read, waits,
 *   I/O, pages), or holds values over whole tables; refused where rows are separated, since the
 *   counts include the rows context values hide.
 * - `nowhere`: reading it changes server state, or shows other sessions' statement text, values or
 *   client data, or credentials.
 */
export type SystemTableUse = 'everywhere' | 'unseparated' | 'nowhere';

/** A group of names sharing one use and one reason. */
interface Reviewed {
  readonly use: SystemTableUse;
  readonly why: string;
  readonly names: readonly string[];
  /**
   * Counter tables whose names are distinctive enough that, where rows are separated, they are
   * refused wherever the name appears: a bare word, a user table or column of that name, any
   * schema (status-counters.ts), not only as this schema's table.
   */
  readonly anywhere?: true;
}

const CATALOG = 'catalog data, shown only for objects the caller has privileges on';
const INNODB_DICTIONARY = "InnoDB's data dictionary: tables, columns, indexes and tablespaces, no row data";
const COUNTERS = 'counts the work of every session (rows and index entries read, pages, operations)';
const STATEMENTS = "shows other sessions' statement text with its constants";

const INFORMATION_SCHEMA: readonly Reviewed[] = [
  {
    use: 'everywhere',
    why: CATALOG,
    names: [
      'applicable_roles',
      'check_constraints',
      'columns',
      'column_privileges',
      'enabled_roles',
      'events',
      'files',
      'geometry_columns',
      'key_column_usage',
      'parameters',
      'referential_constraints',
      'routines',
      'schemata',
      'schema_privileges',
      'table_constraints',
      'table_privileges',
      'tablespaces',
      'triggers',
      'user_privileges',
      'views',
    ],
  },
  {
    use: 'everywhere',
    why: 'a row estimate per table or partition over the whole table, as the planner shows it to EXPLAIN (reviewed: no counter of executor work)',
    names: ['tables', 'partitions', 'statistics'],
  },
  {
    use: 'everywhere',
    why: "the server's fixed lists and settings: character sets, collations, engines, plugins, keywords, functions, locales, spatial systems, variables",
    names: [
      'all_plugins',
      'character_sets',
      'collations',
      'collation_character_set_applicability',
      'engines',
      'plugins',
      'keywords',
      'sql_functions',
      'spatial_ref_sys',
      'global_variables',
      'session_variables',
      'system_variables',
      'locales',
      'feedback',
      'disks',
      'wsrep_membership',
    ],
  },
  { use: 'everywhere', why: "the caller's own session: its profile and its user variables", names: ['profiling', 'user_variables'] },
  {
    use: 'everywhere',
    why: INNODB_DICTIONARY,
    names: [
      'innodb_sys_columns',
      'innodb_sys_fields',
      'innodb_sys_foreign',
      'innodb_sys_foreign_cols',
      'innodb_sys_indexes',
      'innodb_sys_tables',
      'innodb_sys_virtual',
      'innodb_ft_default_stopword',
    ],
  },
  {
    use: 'unseparated',
    why: "InnoDB's rows and count of changes per table, and each tablespace's file size and page numbers, which move with every caller's writes",
    names: ['innodb_sys_tablestats', 'innodb_sys_tablespaces', 'innodb_tablespaces_encryption'],
  },
  // Status variables (Handler_read_*, Innodb_rows_read, ...), the user statistics plugin's rows
  // read per table, index, user and client, InnoDB's metrics, buffer pool pages and compression
  // counters, the key caches' reads, the thread pool's counters, the optimizer trace (its row
  // estimates), the query response time histogram and the cluster's status.
  {
    use: 'unseparated',
    why: COUNTERS,
    anywhere: true,
    names: [
      'session_status',
      'global_status',
      'client_statistics',
      'user_statistics',
      'index_statistics',
      'table_statistics',
      'innodb_metrics',
      'innodb_buffer_page',
      'innodb_buffer_page_lru',
      'innodb_buffer_pool_stats',
      'innodb_cmp',
      'innodb_cmpmem',
      'innodb_cmp_per_index',
      'key_caches',
      'optimizer_trace',
      'thread_pool_groups',
      'thread_pool_queues',
      'thread_pool_stats',
      'thread_pool_waits',
      'query_response_time',
      'wsrep_status',
    ],
  },
  {
    use: 'unseparated',
    why: 'the words and settings of the full-text index of the table named in the global innodb_ft_aux_table, hidden rows included',
    names: ['innodb_ft_config', 'innodb_ft_deleted', 'innodb_ft_being_deleted', 'innodb_ft_index_cache', 'innodb_ft_index_table'],
  },
  {
    use: 'nowhere',
    why: "reading it resets InnoDB's compression statistics for the whole server",
    anywhere: true,
    names: ['innodb_cmp_reset', 'innodb_cmpmem_reset', 'innodb_cmp_per_index_reset'],
  },
  { use: 'nowhere', why: STATEMENTS, names: ['processlist', 'innodb_trx', 'query_cache_info'] },
  {
    use: 'nowhere',
    why: "shows other sessions' locks: the key values they lock, or the names they chose for their locks",
    names: ['innodb_locks', 'innodb_lock_waits', 'metadata_lock_info'],
  },
];

const PERFORMANCE_SCHEMA: readonly Reviewed[] = [
  {
    use: 'everywhere',
    why: "the instrumentation's own settings: what is instrumented and timed, and the timers",
    names: ['setup_actors', 'setup_consumers', 'setup_instruments', 'setup_objects', 'setup_timers', 'performance_timers'],
  },
  {
    use: 'everywhere',
    why: "the replica's applier settings and state, no statement",
    names: ['replication_applier_configuration', 'replication_applier_status'],
  },
  {
    use: 'unseparated',
    why: `${COUNTERS}, waits, stages, transactions, memory, file and socket I/O by event, object, account, host or thread; no statement text`,
    names: [
      'accounts',
      'hosts',
      'users',
      'host_cache',
      'cond_instances',
      'mutex_instances',
      'rwlock_instances',
      'file_instances',
      'socket_instances',
      'table_handles',
      'objects_summary_global_by_type',
      'file_summary_by_event_name',
      'file_summary_by_instance',
      'socket_summary_by_event_name',
      'socket_summary_by_instance',
      'table_io_waits_summary_by_index_usage',
      'table_io_waits_summary_by_table',
      'table_lock_waits_summary_by_table',
      'global_status',
      'session_status',
      'status_by_account',
      'status_by_host',
      'status_by_thread',
      'status_by_user',
      'memory_summary_by_account_by_event_name',
      'memory_summary_by_host_by_event_name',
      'memory_summary_by_thread_by_event_name',
      'memory_summary_by_user_by_event_name',
      'memory_summary_global_by_event_name',
      ...['waits', 'stages', 'transactions'].flatMap((kind) => [
        `events_${kind}_current`,
        `events_${kind}_history`,
        `events_${kind}_history_long`,
        `events_${kind}_summary_by_account_by_event_name`,
        `events_${kind}_summary_by_host_by_event_name`,
        `events_${kind}_summary_by_thread_by_event_name`,
        `events_${kind}_summary_by_user_by_event_name`,
        `events_${kind}_summary_global_by_event_name`,
      ]),
      'events_waits_summary_by_instance',
    ],
  },
  {
    use: 'nowhere',
    why: STATEMENTS,
    names: [
      'events_statements_current',
      'events_statements_history',
      'events_statements_history_long',
      'events_statements_summary_by_account_by_event_name',
      'events_statements_summary_by_digest',
      'events_statements_summary_by_host_by_event_name',
      'events_statements_summary_by_program',
      'events_statements_summary_by_thread_by_event_name',
      'events_statements_summary_by_user_by_event_name',
      'events_statements_summary_global_by_event_name',
      'prepared_statements_instances',
      'threads',
    ],
  },
  {
    use: 'nowhere',
    why: "shows other sessions' values: their user variables (context values among them), the attributes their clients sent, the names of their locks",
    names: ['user_variables_by_thread', 'session_connect_attrs', 'session_account_connect_attrs', 'metadata_locks'],
  },
  {
    use: 'nowhere',
    why: "the replica's connection (primary host and replication user) and its last errors, which quote replicated statements",
    names: ['replication_connection_configuration', 'replication_applier_status_by_coordinator', 'replication_applier_status_by_worker'],
  },
];

/** sys views come with an x$ form of the same rows, unformatted; both are listed by the base name. */
const SYS_VIEWS: readonly Reviewed[] = [
  { use: 'everywhere', why: "the sys schema's own settings and version", names: ['sys_config', 'version'] },
  {
    use: 'unseparated',
    why: 'views over the counters of performance_schema and information_schema',
    names: [
      'host_summary',
      'host_summary_by_file_io',
      'host_summary_by_file_io_type',
      'host_summary_by_stages',
      'host_summary_by_statement_latency',
      'host_summary_by_statement_type',
      'innodb_buffer_stats_by_schema',
      'innodb_buffer_stats_by_table',
      'io_by_thread_by_latency',
      'io_global_by_file_by_bytes',
      'io_global_by_file_by_latency',
      'io_global_by_wait_by_bytes',
      'io_global_by_wait_by_latency',
      'latest_file_io',
      'memory_by_host_by_current_bytes',
      'memory_by_thread_by_current_bytes',
      'memory_by_user_by_current_bytes',
      'memory_global_by_current_bytes',
      'memory_global_total',
      'metrics',
      'ps_check_lost_instrumentation',
      'schema_auto_increment_columns',
      'schema_index_statistics',
      'schema_object_overview',
      'schema_redundant_indexes',
      'schema_tables_with_full_table_scans',
      'schema_table_statistics',
      'schema_table_statistics_with_buffer',
      'schema_unused_indexes',
      'session_ssl_status',
      'user_summary',
      'user_summary_by_file_io',
      'user_summary_by_file_io_type',
      'user_summary_by_stages',
      'user_summary_by_statement_latency',
      'user_summary_by_statement_type',
      'waits_by_host_by_latency',
      'waits_by_user_by_latency',
      'waits_global_by_latency',
      'wait_classes_global_by_avg_latency',
      'wait_classes_global_by_latency',
    ],
  },
  {
    use: 'nowhere',
    why: `${STATEMENTS}, or the locks and key values of other transactions`,
    names: [
      'processlist',
      'session',
      'statement_analysis',
      'statements_with_errors_or_warnings',
      'statements_with_full_table_scans',
      'statements_with_runtimes_in_95th_percentile',
      'statements_with_sorting',
      'statements_with_temp_tables',
      'innodb_lock_waits',
      'schema_table_lock_waits',
    ],
  },
];

/** sys views that exist only in their x$ form, as helpers of the procedures. */
const SYS_X_ONLY: readonly Reviewed[] = [
  {
    use: 'unseparated',
    why: 'views over the counters of performance_schema (statement latency by digest, without text; table I/O) and information_schema',
    names: [
      'x$ps_digest_95th_percentile_by_avg_us',
      'x$ps_digest_avg_latency_distribution',
      'x$ps_schema_table_statistics_io',
      'x$schema_flattened_keys',
    ],
  },
];

const SYS_ROUTINES: readonly Reviewed[] = [
  {
    use: 'everywhere',
    why: 'a function of its arguments, or one reading the instrumentation settings',
    names: [
      'extract_schema_from_file_name',
      'extract_table_from_file_name',
      'format_bytes',
      'format_path',
      'format_statement',
      'format_time',
      'list_add',
      'list_drop',
      'quote_identifier',
      'sys_get_config',
      'version_major',
      'version_minor',
      'version_patch',
      'ps_is_account_enabled',
      'ps_is_consumer_enabled',
      'ps_is_instrument_default_enabled',
      'ps_is_instrument_default_timed',
      'ps_is_thread_instrumented',
    ],
  },
  {
    use: 'unseparated',
    why: 'the account or thread id of another session, as performance_schema.threads shows it',
    names: ['ps_thread_account', 'ps_thread_id'],
  },
  { use: 'nowhere', why: "returns another session's statements", names: ['ps_thread_stack', 'ps_thread_trx_info'] },
  {
    use: 'nowhere',
    why: "a procedure that changes the instrumentation, truncates its counters, runs statements or prints other sessions' statements",
    names: [
      'create_synonym_db',
      'diagnostics',
      'execute_prepared_stmt',
      'ps_setup_disable_background_threads',
      'ps_setup_disable_consumer',
      'ps_setup_disable_instrument',
      'ps_setup_disable_thread',
      'ps_setup_enable_background_threads',
      'ps_setup_enable_consumer',
      'ps_setup_enable_instrument',
      'ps_setup_enable_thread',
      'ps_setup_reload_saved',
      'ps_setup_reset_to_default',
      'ps_setup_save',
      'ps_setup_show_disabled',
      'ps_setup_show_disabled_consumers',
      'ps_setup_show_disabled_instruments',
      'ps_setup_show_enabled',
      'ps_setup_show_enabled_consumers',
      'ps_setup_show_enabled_instruments',
      'ps_statement_avg_latency_histogram',
      'ps_trace_statement_digest',
      'ps_trace_thread',
      'ps_truncate_all_tables',
      'statement_performance_analyzer',
      'table_exists',
    ],
  },
];

const MYSQL: readonly Reviewed[] = [
  {
    use: 'everywhere',
    why: 'privileges granted, without credentials (as information_schema.*_PRIVILEGES)',
    names: ['db', 'tables_priv', 'columns_priv', 'procs_priv', 'proxies_priv', 'roles_mapping'],
  },
  {
    use: 'everywhere',
    why: 'definitions and reference data: routines, events, functions, plugins, help, time zones',
    names: [
      'proc',
      'event',
      'func',
      'plugin',
      'help_category',
      'help_keyword',
      'help_relation',
      'help_topic',
      'time_zone',
      'time_zone_leap_second',
      'time_zone_name',
      'time_zone_transition',
      'time_zone_transition_type',
    ],
  },
  {
    use: 'unseparated',
    why: "the replication position, the transaction registry and InnoDB's persistent row and page estimates per table and index, which move with every caller's writes",
    names: ['gtid_slave_pos', 'transaction_registry', 'innodb_table_stats', 'innodb_index_stats'],
  },
  {
    use: 'unseparated',
    why: 'statistics over whole tables: exact row counts, and the smallest, largest and histogram of column values, hidden rows included',
    names: ['table_stats', 'index_stats', 'column_stats'],
  },
  {
    use: 'nowhere',
    why: 'authentication data: password hashes or stored passwords',
    names: ['user', 'global_priv', 'servers', 'password_history'],
  },
  { use: 'nowhere', why: "the statement logs: other sessions' statement text", names: ['general_log', 'slow_log'] },
  {
    use: 'nowhere',
    why: 'a procedure that alters a table (write the ALTER TABLE instead)',
    names: ['addgeometrycolumn', 'dropgeometrycolumn'],
  },
];

/** One reviewed name: where it may be read and why. */
export interface SystemTableReview {
  readonly use: SystemTableUse;
  readonly why: string;
}

const index = (groups: readonly Reviewed[], xForms = false): ReadonlyMap<string, SystemTableReview> => {
  const map = new Map<string, SystemTableReview>();
  for (const { use, why, names } of groups)
    for (const name of names) {
      map.set(name, { use, why });
      if (xForms) map.set(`x$${name}`, { use, why });
    }
  return map;
};

/** The reviewed names of each system schema, lower case. */
export const SYSTEM_TABLES: Readonly<Record<string, ReadonlyMap<string, SystemTableReview>>> = {
  information_schema: index(INFORMATION_SCHEMA),
  performance_schema: index(PERFORMANCE_SCHEMA),
  sys: new Map([...index(SYS_VIEWS, true), ...index(SYS_X_ONLY), ...index(SYS_ROUTINES)]),
  mysql: index(MYSQL),
};

/**
 * The information_schema counter tables refused wherever their name appears where rows are
 * separated (the groups marked `anywhere`), lower case.
 */
export const COUNTER_NAMES: ReadonlySet<string> = new Set(
  INFORMATION_SCHEMA.filter((group) => group.anywhere).flatMap((group) => group.names),
);
