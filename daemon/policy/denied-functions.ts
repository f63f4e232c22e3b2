import { objection, readOnly } from './objections.js';
import { callName, isPunct, isWord, keywordAt } from './tokens.js';
import type { Objection, Token } from './types.js';

/** Functions refused by name, whatever the dialect: no engine uses these names for a harmless function. */
interface DeniedGroup {
  /** Finishes "Refused: name() ..." */
  readonly does: string;
  /** Refused on writable connections too. */
  readonly always: boolean;
  readonly names: readonly string[];
  readonly prefixes: readonly string[];
}

/** Writes refused on read-only connections only (PostgreSQL's names, some of them in no list generated from pg_proc). */
const SEQUENCE_WRITES: DeniedGroup = {
  does: 'writes to the database (a sequence, a transaction id or a notification)',
  always: false,
  names: ['nextval', 'setval', 'txid_current', 'pg_current_xact_id', 'pg_notify', 'pg_logical_emit_message'],
  prefixes: [],
};

const GROUPS: readonly DeniedGroup[] = [
  {
    does: 'waits on purpose and holds a connection',
    always: true,
    // MariaDB's own list (mysql.help_topic, "Miscellaneous Functions" and "Information Functions")
    // and MySQL's replication waits.
    names: [
      'sleep',
      'benchmark',
      'master_pos_wait',
      'master_gtid_wait',
      'source_pos_wait',
      'wait_for_executed_gtid_set',
      'wait_until_sql_thread_after_gtids',
      'wsrep_sync_wait_upto_gtid',
    ],
    prefixes: ['pg_sleep'],
  },
  {
    does: 'takes or releases a lock that outlives the call',
    always: true,
    names: ['get_lock', 'release_lock', 'release_all_locks'],
    prefixes: ['pg_advisory_', 'pg_try_advisory_'],
  },
  {
    does: 'reads or writes files on the database host',
    always: true,
    names: ['load_file', 'readfile', 'writefile', 'edit', 'pg_stat_file', 'lo_import', 'lo_export'],
    prefixes: ['pg_read_', 'pg_ls_', 'pg_file_'],
  },
  {
    // PostgreSQL's large objects live outside any table, outlive the call and are shared by every role that may read them.
    does: 'creates, opens or changes a large object, which outlives the call',
    always: true,
    names: [],
    prefixes: ['lo_'],
  },
  {
    does: 'runs programs or loads code on the database host',
    always: true,
    names: ['sys_exec', 'sys_eval', 'load_extension', 'eval'],
    prefixes: [],
  },
  { does: 'reaches another database server', always: true, names: [], prefixes: ['dblink'] },
  {
    does: 'controls the server or other sessions',
    always: true,
    names: [
      'pg_terminate_backend',
      'pg_cancel_backend',
      'pg_reload_conf',
      'pg_rotate_logfile',
      'pg_promote',
      'pg_switch_wal',
      'pg_drop_replication_slot',
    ],
    prefixes: ['pg_create_', 'pg_backup_', 'pg_start_backup', 'pg_stop_backup', 'pg_replication_origin_'],
  },
  SEQUENCE_WRITES,
];

/** PostgreSQL's functions refused on read-only connections as writes (txid_current, pg_current_xact_id, nextval, ...). */
export const SEQUENCE_WRITE_NAMES: readonly string[] = SEQUENCE_WRITES.names;

function groupOf(name: string): DeniedGroup | undefined {
  return GROUPS.find((g) => g.names.includes(name) || g.prefixes.some((p) => name.startsWith(p)));
}

function refuse(label: string, group: DeniedGroup): Objection {
  if (!group.always) return readOnly('denied-function', `${label} ${group.does}`, `Remove ${label}`);
  return objection('denied-function', `Refused: ${label} ${group.does}.`, `Remove ${label}; hanactl does not run it on any connection.`);
}

/**
 * The refusal for calling the function `name` (lower case, unqualified), or undefined when it is
 * not denied on this connection. Shared by the token rules and PostgreSQL's parse tree.
 */
export function deniedFunctionName(name: string, allowWrite: boolean): Objection | undefined {
  const group = groupOf(name);
  return group && (group.always || !allowWrite) ? refuse(`${name}()`, group) : undefined;
}

/**
 * Calls of side-effect and host-access functions, matched as a name followed by `(` in the
 * skeleton (so a column `load_file` or the string 'sleep(1)' passes), plus the sequence forms
 * HANA `seq.NEXTVAL` and `NEXT VALUE FOR seq`. A name written with Unicode escapes cannot be
 * checked and is refused when called.
 */
export function deniedFunction(tokens: readonly Token[], allowWrite: boolean): Objection | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    if (name !== undefined && tokens[k]?.opaque) {
      return objection(
        'denied-function',
        'Refused: a function is called by a name written with escapes, which cannot be checked.',
        'Write the function name plainly.',
      );
    }
    const denied = name === undefined ? undefined : deniedFunctionName(name, allowWrite);
    if (denied) return denied;
    // MySQL/MariaDB LAST_INSERT_ID(n) sets the session's value, which outlives the call; without an argument it only reads.
    if (name === 'last_insert_id' && !isPunct(tokens[k + 2], ')')) {
      return objection(
        'denied-function',
        'Refused: LAST_INSERT_ID() with an argument sets a session value that outlives the call.',
        'Call LAST_INSERT_ID() without an argument to read it.',
      );
    }
    const nextValue =
      // `seq.nextval`, and quoted (`s`.`nextval`, "s"."nextval"), which sql_mode ORACLE reads as one too.
      (isPunct(tokens[k - 1], '.') && (isWord(tokens[k], 'NEXTVAL') || (tokens[k]?.kind === 'quoted' && tokens[k]?.text.toUpperCase() === 'NEXTVAL'))) ||
      (keywordAt(tokens, k) === 'NEXT' && isWord(tokens[k + 1], 'VALUE') && isWord(tokens[k + 2], 'FOR'));
    if (nextValue && !allowWrite)
      return refuse(isWord(tokens[k], 'NEXT') ? 'NEXT VALUE FOR' : `${tokens[k - 2]?.shown ?? ''}.NEXTVAL`, SEQUENCE_WRITES);
  }
  return undefined;
}
