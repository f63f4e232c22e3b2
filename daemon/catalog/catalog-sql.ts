import { isWhitespace, trimEndWhere } from '../../shared/linear-text.js';
import type { Param } from '../../shared/schemas.js';
import type { CatalogRow } from './catalog.js';

/**
 * Helpers every engine's catalog shares: binding, patterns, quoting and row reading. Nothing
 * here concatenates a value into SQL; values go to `bind` and come back as placeholders.
 */

/** The escape character of every LIKE the catalogs generate (the same on all four engines). */
export const LIKE_ESCAPE = "ESCAPE '!'";

/**
 * The bound LIKE pattern for an agent's pattern: lower-cased (the catalogs compare
 * `LOWER(name)`), `!` escaped, and wrapped in `%...%` when it holds no `%`, so a plain word
 * is a substring search. `%` and `_` keep their LIKE meaning.
 */
export function likePattern(pattern: string): string {
  const folded = pattern.toLowerCase().replace(/!/g, '!!');
  return folded.includes('%') ? folded : `%${folded}%`;
}

/** Collects parameters in order and answers each value's placeholder. */
export interface Binder {
  /** Adds a value and returns its placeholder (`$n` or `?`). */
  bind(value: Param): string;
  readonly params: Param[];
}

/** A binder for the driver's placeholder style. */
export function binder(style: 'dollar' | 'question'): Binder {
  const params: Param[] = [];
  return {
    params,
    bind(value) {
      params.push(value);
      return style === 'dollar' ? `$${params.length}` : '?';
    },
  };
}

/** A quoting function for identifiers delimited by `quote` (embedded delimiters doubled). */
export function quoteWith(quote: '"' | '`'): (name: string) => string {
  return (name) => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL cannot be quoted safely on any engine
    if (/\u0000/.test(name)) throw new Error('An identifier cannot contain a NUL character.');
    return `${quote}${name.split(quote).join(quote + quote)}${quote}`;
  };
}

/** Removes trailing semicolons and whitespace so a statement can be wrapped in EXPLAIN (linear in the text). */
export function withoutTrailingSemicolons(sql: string): string {
  return trimEndWhere(sql, (ch) => ch === ';' || isWhitespace(ch));
}

/** A cell as text, or null. */
export function text(row: CatalogRow, key: string): string | null {
  const value = row[key];
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A cell as text that must be present (names): an absent value becomes ''. */
export function name(row: CatalogRow, key: string): string {
  return text(row, key) ?? '';
}

/** A cell as a finite number (drivers send 64-bit integers as strings), or null. */
export function num(row: CatalogRow, key: string): number | null {
  const value = row[key];
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : null;
}

/** A cell as a boolean: true, 1, 'YES', 'TRUE', 'Y', 't'. */
export function flag(row: CatalogRow, key: string): boolean {
  const value = row[key];
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  return typeof value === 'string' && ['yes', 'true', 'y', 't', '1'].includes(value.toLowerCase());
}

/** A cell that an engine reports as an array (PostgreSQL `text[]`), as strings. */
export function list(row: CatalogRow, key: string): string[] {
  const value = row[key];
  return Array.isArray(value) ? value.map((v) => (v === null ? '' : String(v))) : [];
}

/** `total` and `truncated` of a capped list whose rows carry `COUNT(*) OVER ()` in `key`. */
export function capInfo(rows: readonly CatalogRow[], key: string): { total: number; truncated: boolean } {
  const first = rows[0];
  const total = first ? (num(first, key) ?? rows.length) : 0;
  return { total, truncated: total > rows.length };
}

/** Groups rows by a key, keeping first-seen order. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
