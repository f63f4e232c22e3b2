import type { DialectPolicy } from './dialects.js';
import { categoryObjection } from './objections.js';
import { callName, isPunct, isWord, keywordAt } from './tokens.js';
import type { Objection, Token } from './types.js';

/** How a variable or context value is named in a message: `@name` or `'NAME'`. */
function variable(tokens: readonly Token[], at: number): string {
  const token = tokens[at];
  if (token?.kind === 'string') return `'${token.text}'`;
  if (!isPunct(token, '@')) return token?.shown ?? '';
  // A quoted name (@`q`, @'q', @"q") is shown by its text, as the server names the variable.
  const name = tokens[at + 1];
  return `@${name === undefined ? '' : name.kind === 'word' ? name.shown : name.text}`;
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
  if (dialect.colonEqualsAssigns) {
    const assigned = assignedByArgument(tokens);
    if (assigned) return label(assigned);
  }
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

/** A user variable `@name` at `k` (not a system variable `@@name`). */
const userVariableAt = (tokens: readonly Token[], k: number): boolean =>
  isPunct(tokens[k], '@') && !isPunct(tokens[k - 1], '@') && !isPunct(tokens[k + 1], '@') && tokens[k + 1] !== undefined;

/**
 * MySQL/MariaDB statements that assign a user variable handed to them (sql_yacc.yy): CALL's OUT
 * and INOUT arguments (`CALL p(@v)`, assigned when the procedure returns), EXECUTE's `USING @v`
 * (the OUT arguments of the statement it runs), and GET DIAGNOSTICS' `@v = item` targets.
 */
function assignedByArgument(tokens: readonly Token[]): string | undefined {
  const lead = tokens.findIndex((t) => !isPunct(t, '('));
  const word = keywordAt(tokens, lead);
  if (word === 'CALL') {
    const at = tokens.findIndex((_, k) => userVariableAt(tokens, k) && (isPunct(tokens[k - 1], '(') || isPunct(tokens[k - 1], ',')));
    return at < 0 ? undefined : `CALL with ${variable(tokens, at)} as an argument (an OUT or INOUT parameter assigns it)`;
  }
  if (word === 'EXECUTE') {
    const using = tokens.findIndex((t, k) => k > lead && isWord(t, 'USING'));
    const at = using < 0 ? -1 : tokens.findIndex((_, k) => k > using && userVariableAt(tokens, k));
    return at < 0 ? undefined : `EXECUTE ... USING ${variable(tokens, at)} (an OUT parameter assigns it)`;
  }
  if (word === 'GET' && tokens.some((t) => isWord(t, 'DIAGNOSTICS'))) {
    const at = tokens.findIndex((_, k) => userVariableAt(tokens, k));
    return at < 0 ? undefined : `GET DIAGNOSTICS into ${variable(tokens, at)}`;
  }
  return undefined;
}

/** `SELECT ... INTO OUTFILE | DUMPFILE` writes a file on the database host; refused on every connection. */
export function hostAccessAnywhere(tokens: readonly Token[]): Objection | undefined {
  const at = tokens.findIndex((_, k) => keywordAt(tokens, k) === 'INTO' && isWord(tokens[k + 1], 'OUTFILE', 'DUMPFILE'));
  return at < 0 ? undefined : categoryObjection('host-access', `INTO ${tokens[at + 1]?.text}`);
}
