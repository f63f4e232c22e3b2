import type { DialectPolicy } from './dialects.js';
import { categoryObjection } from './objections.js';
import { callName, isPunct, isWord, keywordAt } from './tokens.js';
import type { Objection, Token } from './types.js';

/** How a variable or context value is named in a message: `@name` or `'NAME'`. */
function variable(tokens: readonly Token[], at: number): string {
  const token = tokens[at];
  if (token?.kind === 'string') return `'${token.text}'`;
  return isPunct(token, '@') ? `@${tokens[at + 1]?.shown ?? ''}` : (token?.shown ?? '');
}

/**
 * Session and context changes written anywhere in a statement, which the leading keyword alone
 * misses: `:=` (user variables), `SET @x` / HANA `SET 'X'` inside a block, MySQL `INTO @x`,
 * `set_config(...)`, and PostgreSQL's `UPDATE pg_settings`. Refused on every connection, since
 * context values scope what the caller may see.
 */
export function sessionChangeAnywhere(tokens: readonly Token[], dialect: DialectPolicy): Objection | undefined {
  const label = (text: string): Objection => categoryObjection('session-change', text);
  const updates = tokens.some((t) => isWord(t, 'UPDATE'));
  for (let k = 0; k < tokens.length; k++) {
    const word = keywordAt(tokens, k);
    const next = tokens[k + 1];
    if (dialect.colonEqualsAssigns && isPunct(tokens[k], ':') && isPunct(next, '=')) {
      const name = isPunct(tokens[k - 2], '@') ? variable(tokens, k - 2) : (tokens[k - 1]?.shown ?? 'a variable');
      return label(`assigning ${name} with :=`);
    }
    if ((word === 'SET' || word === 'UNSET') && (isPunct(next, '@') || next?.kind === 'string')) {
      return label(`${word} ${variable(tokens, k + 1)}`);
    }
    if (word === 'INTO' && isPunct(next, '@')) return label(`INTO ${variable(tokens, k + 1)}`);
    if (callName(tokens, k) === 'set_config') return label('set_config()');
    // pg_settings however it is named: pg_settings, "pg_settings", pg_catalog."pg_settings".
    if (updates && (isWord(tokens[k], 'PG_SETTINGS') || (tokens[k]?.kind === 'quoted' && tokens[k]?.text.toLowerCase() === 'pg_settings')))
      return label('UPDATE pg_settings');
  }
  return undefined;
}

/** `SELECT ... INTO OUTFILE | DUMPFILE` writes a file on the database host; refused on every connection. */
export function hostAccessAnywhere(tokens: readonly Token[]): Objection | undefined {
  const at = tokens.findIndex((_, k) => keywordAt(tokens, k) === 'INTO' && isWord(tokens[k + 1], 'OUTFILE', 'DUMPFILE'));
  return at < 0 ? undefined : categoryObjection('host-access', `INTO ${tokens[at + 1]?.text}`);
}
