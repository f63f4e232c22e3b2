import { HanactlError } from '../../../shared/errors.js';
import type { SqliteDatabase } from './sqlite-session.js';

/**
 * SQLite's settings that live in the connection, not in the file, and that SQL can change with
 * `PRAGMA name = value` (from SQLite's pragma list: https://sqlite.org/pragma.html). `query_only`
 * is not here: the session sets it before every statement. Process-wide ones count too, since a
 * host holds one connection.
 */
const SETTINGS = [
  'analysis_limit',
  'automatic_index',
  'busy_timeout',
  'cache_size',
  'cache_spill',
  'cell_size_check',
  'checkpoint_fullfsync',
  'count_changes',
  'defer_foreign_keys',
  'empty_result_callbacks',
  'foreign_keys',
  'full_column_names',
  'fullfsync',
  'hard_heap_limit',
  'ignore_check_constraints',
  'journal_mode',
  'journal_size_limit',
  'legacy_alter_table',
  'locking_mode',
  'max_page_count',
  'mmap_size',
  'read_uncommitted',
  'recursive_triggers',
  'reverse_unordered_selects',
  'secure_delete',
  'short_column_names',
  'soft_heap_limit',
  'synchronous',
  'temp_store',
  'threads',
  'trusted_schema',
  'wal_autocheckpoint',
  'writable_schema',
] as const;

/**
 * SQLite3 Multiple Ciphers' own pragmas that read a setting. They act while a statement is
 * prepared (before any check can look at it), and a changed cipher setting or key cannot be
 * undone on the same handle: when one differs after a call, the connection is retired.
 */
const CIPHER_SETTINGS = [
  'cipher',
  'hmac_check',
  'legacy',
  'legacy_page_size',
  'kdf_iter',
  'plaintext_header_size',
  'mc_legacy_wal',
] as const;

/**
 * SQL functions agent SQL may not call: SQLite3 Multiple Ciphers' configuration and codec
 * functions (they change the cipher settings of the connection, or of the whole process with
 * `default:`, and read codec data), `fts3_tokenizer` (registers a tokenizer on the connection)
 * and `load_extension`. Each arity is replaced by a function that refuses.
 */
const REFUSED_FUNCTION = /^(sqlite3mc_(?!version$)\w+|fts3_tokenizer|load_extension)$/i;

/**
 * Only a statement that spells one of these words can change a setting (PRAGMA), attach a
 * database (ATTACH, DETACH) or make a temporary object (CREATE). SQLite's keywords have no escape
 * sequences and fold ASCII case only, so a statement without them cannot do any of it; the
 * thorough check after the call is skipped for it.
 */
const MAY_CHANGE_CONNECTION = /pragma|attach|detach|create/i;

type Value = string | number | bigint | null;

function readSetting(db: SqliteDatabase, name: string): Value {
  const rows = db.pragma(name) as Record<string, Value>[];
  const first = rows[0];
  return first === undefined ? null : (Object.values(first)[0] ?? null);
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * What a connection looked like when it was opened, and the means to put it back after each
 * call: settings restored, temporary objects dropped, attached databases detached, refused
 * functions kept refused. `restore` answers false when the connection cannot be trusted again
 * (its cipher state changed, or it no longer reads the file); the host then ends.
 */
export class ConnectionState {
  readonly #db: SqliteDatabase;
  readonly #settings = new Map<string, Value>();
  readonly #cipher = new Map<string, Value>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
    const functions = db.prepare('SELECT DISTINCT name, narg FROM pragma_function_list').raw(true);
    for (const [name, narg] of functions.all() as [string, number][]) {
      if (REFUSED_FUNCTION.test(name)) this.#refuse(name, narg);
    }
    for (const name of SETTINGS) this.#settings.set(name, readSetting(db, name));
    for (const name of CIPHER_SETTINGS) this.#cipher.set(name, readSetting(db, name));
  }

  #refuse(name: string, narg: number): void {
    const refuse = (): never => {
      throw new HanactlError('STATEMENT_REFUSED', `Refused: the SQL function ${name}() changes or reveals how the database is opened.`, {
        rule: 'engine-function',
      });
    };
    // better-sqlite3 takes the arity from the function's length.
    if (narg >= 0) Object.defineProperty(refuse, 'length', { value: narg });
    this.#db.function(name, { varargs: narg < 0, deterministic: false }, refuse);
  }

  /**
   * Puts the connection back the way it was opened after a call that ran `sql` (outside any
   * transaction). Returns false when it cannot be trusted again.
   */
  restore(sql: string): boolean {
    if (!MAY_CHANGE_CONNECTION.test(sql)) return true;
    const db = this.#db;
    try {
      for (const [name, value] of this.#cipher) if (readSetting(db, name) !== value) return false;
      db.prepare('SELECT count(*) FROM main.sqlite_schema').raw(true).iterate().return?.();
      for (const [name, value] of this.#settings) {
        if (readSetting(db, name) !== value) db.pragma(`${name} = ${typeof value === 'string' ? quoteName(value) : String(value)}`);
      }
      db.pragma('case_sensitive_like = OFF'); // cannot be read back, so it is always set
      const temp = db.prepare(
        "SELECT type, name FROM temp.sqlite_schema WHERE type IN ('trigger', 'view', 'table') ORDER BY type = 'table'",
      );
      for (const [type, name] of temp.raw(true).all() as [string, string][]) db.exec(`DROP ${type} IF EXISTS temp.${quoteName(name)}`);
      const attached = db.prepare("SELECT name FROM pragma_database_list WHERE name NOT IN ('main', 'temp')").raw(true);
      for (const [name] of attached.all() as [string][]) db.exec(`DETACH DATABASE ${quoteName(name)}`);
      return true;
    } catch {
      return false;
    }
  }
}
