import { HanactlError } from '../../shared/errors.js';

/**
 * Session variables HANA or its clients set themselves (auditing identity, formats, tracing).
 * A context parameter may not overwrite one: `SET 'APPLICATIONUSER'` would forge the audited
 * user. Prefixes cover families (`XS_`, `SAP_`, `TEMPORAL_`).
 */
const RESERVED_NAMES = new Set([
  'APPLICATION',
  'APPLICATIONUSER',
  'APPLICATIONVERSION',
  'APPLICATIONSOURCE',
  'APPLICATIONCOMPONENT',
  'APPLICATIONCOMPONENTTYPE',
  'CLIENT',
  'CDS_CLIENT',
  'LOCALE',
  'LOCALE_SAP',
  'DATE_FORMAT',
  'TIME_FORMAT',
  'TIMESTAMP_FORMAT',
  'SECONDDATE_FORMAT',
  'TRACEPROFILE',
  'PROTOCOL_VERSION',
  'STATEMENT_ROUTING',
]);
const RESERVED_PREFIXES = ['XS_', 'SAP_', 'TEMPORAL_'];

/** True for names an engine keeps for itself (SAP HANA's predefined session variables). */
export function isReservedContextName(name: string): boolean {
  return RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * A declared name as the lower-case identifier it becomes in SQL: PostgreSQL's setting
 * `mcp.<name>`, MySQL's user variable `@mcp_<name>`. Declared names are already letters,
 * digits and _; anything else is dropped all the same, since the result is spliced into SQL.
 */
export function contextSqlName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_]/g, '');
}

/** Context parameter names: trimmed, upper-cased, a letter first, letters/digits/_ only, at most 30, no repeats. */
export function normaliseContextNames(names: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim().toUpperCase();
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) {
      throw new HanactlError(
        'CONTEXT_INVALID',
        `The context parameter name "${raw}" must start with a letter and hold only letters, digits and _.`,
      );
    }
    if (name.length > 30) throw new HanactlError('CONTEXT_INVALID', `The context parameter name "${name}" is longer than 30 characters.`);
    if (isReservedContextName(name)) {
      throw new HanactlError(
        'CONTEXT_INVALID',
        `The context parameter name "${name}" is a session variable an engine reserves (SAP HANA's ${name}); choose another name.`,
      );
    }
    if (out.includes(name)) throw new HanactlError('CONTEXT_INVALID', `The context parameter "${name}" is declared twice.`);
    out.push(name);
  }
  return out;
}
