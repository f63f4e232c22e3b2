import { readOnly } from './objections.js';
import { isPunct } from './tokens.js';
import type { Objection, Token } from './types.js';

/** SQLite pragmas that only report, whatever their argument (usually a table or index name). */
const REPORTING = new Set(
  'table_info table_xinfo table_list index_info index_xinfo index_list foreign_key_list foreign_key_check integrity_check quick_check database_list collation_list function_list module_list pragma_list compile_options data_version freelist_count page_count'.split(
    ' ',
  ),
);
/** SQLite pragmas that report a setting when given no value (given one, they change it). */
const SETTINGS = new Set(
  'application_id auto_vacuum automatic_index busy_timeout cache_size cache_spill cell_size_check checkpoint_fullfsync defer_foreign_keys encoding foreign_keys fullfsync ignore_check_constraints journal_mode journal_size_limit legacy_alter_table locking_mode max_page_count mmap_size page_size query_only read_uncommitted recursive_triggers reverse_unordered_selects schema_version secure_delete synchronous temp_store threads trusted_schema user_version wal_autocheckpoint'.split(
    ' ',
  ),
);

const INSTEAD = "Use PRAGMA table_info(name) or SELECT * FROM pragma_table_info('name') instead";

/**
 * `PRAGMA [schema.]name [= value | (argument)]` on a read-only connection: allowed for reporting
 * pragmas, and for settings read without a value. `tokens` start at PRAGMA.
 */
export function pragmaObjection(tokens: readonly Token[]): Objection | undefined {
  const at = isPunct(tokens[2], '.') ? 3 : 1;
  const token = tokens[at];
  const name = token?.kind === 'word' || token?.kind === 'quoted' ? token.text.toLowerCase() : '';
  const rest = tokens.slice(at + 1);
  const assigns = rest.some((t) => isPunct(t, '='));
  if ((REPORTING.has(name) && !assigns) || (SETTINGS.has(name) && rest.length === 0)) return undefined;
  if (assigns || SETTINGS.has(name)) {
    const instead = SETTINGS.has(name) ? `Read the setting with PRAGMA ${name} alone` : INSTEAD;
    return readOnly('pragma-write', `PRAGMA ${name} with a value changes a setting`, instead);
  }
  return readOnly('pragma-write', `PRAGMA ${name || 'without a name'} is not one of the read-only pragmas`, INSTEAD);
}

/**
 * `pragma_<name>` in any form SQLite resolves to a table (a word, a quoted identifier, or a
 * string, schema-qualified or not, with or without arguments). pragma.c makes every pragma that
 * returns a result an eponymous virtual table, and `pragma_x(a)` or `WHERE arg = a` runs
 * `PRAGMA x = a`: `pragma_optimize(65538)` runs ANALYZE, `pragma_user_version(5)` sets it. On a
 * read-only connection only the reporting pragmas pass, whatever their argument; every other
 * name, a setting or one unknown here, is refused (a setting is read with `PRAGMA name`).
 */
export function pragmaTableObjection(tokens: readonly Token[], allowWrite: boolean): Objection | undefined {
  if (allowWrite) return undefined;
  for (const token of tokens) {
    if (token.kind !== 'word' && token.kind !== 'quoted' && token.kind !== 'string') continue;
    const text = token.text.toLowerCase();
    // A string is a table name only as a whole name; a value that mentions one is not.
    if (!text.startsWith('pragma_') || (token.kind === 'string' && !/^pragma_[a-z0-9_]*$/.test(text))) continue;
    const name = text.slice('pragma_'.length);
    if (REPORTING.has(name)) continue;
    const instead = SETTINGS.has(name) ? `Read the setting with PRAGMA ${name} alone` : INSTEAD;
    return readOnly(
      'pragma-write',
      `pragma_${name} runs PRAGMA ${name || '(no name)'}, which is not one of the read-only pragmas`,
      instead,
    );
  }
  return undefined;
}
