import { objection } from './objections.js';
import { callArguments, literalArgument, matchParens, runsSql, sqlArgumentPositions } from './pg-functions.js';
import { callName } from './tokens.js';
import type { Objection, Token, Verdict } from './types.js';

const unchecked = (name: string): Objection =>
  objection(
    'embedded-sql',
    `Refused: ${name}() runs SQL text that cannot be checked here.`,
    'Pass the query as one plain string literal, or run the query itself.',
  );

/**
 * The verdict on one argument at a position where the function runs SQL text: `text` is the
 * string constant there (undefined when it is anything else), `number` whether it is a numeric
 * constant (crosstab(sql, n) has an overload with a count there). Shared by both checks.
 */
export function sqlArgumentObjection(
  name: string,
  text: string | undefined,
  number: boolean,
  check: (sql: string) => Verdict,
): Objection | undefined {
  if (text === undefined) return number ? undefined : unchecked(name);
  const verdict = check(text);
  if (verdict.ok) return undefined;
  if (verdict.rule === 'too-complex') return verdict;
  return objection(
    'embedded-sql',
    `Refused: ${name}() runs the SQL text it is given, and that text is refused (${verdict.rule}).`,
    verdict.hint,
  );
}

/**
 * A function that runs SQL text (query_to_xml, ts_stat, ts_rewrite, crosstab; the list comes from
 * pg_proc, see pg-functions.ts) is allowed when each SQL argument is one plain string literal that
 * passes `check` on its own; SQL text built at run time cannot be checked and is refused.
 */
export function embeddedSql(tokens: readonly Token[], check: (sql: string) => Verdict): Objection | undefined {
  let close: Int32Array | undefined;
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    if (name === undefined || !runsSql(name)) continue;
    close ??= matchParens(tokens);
    const args = callArguments(tokens, k + 1, close);
    const positions = sqlArgumentPositions(name, args.length);
    // No overload with this many arguments runs SQL (ts_rewrite(tsquery, tsquery, tsquery)).
    for (const position of positions ?? []) {
      const range = args[position];
      const isNumber = range !== undefined && range[1] - range[0] === 1 && tokens[range[0]]?.kind === 'number';
      const refused = sqlArgumentObjection(name, literalArgument(tokens, range), isNumber, check);
      if (refused) return refused;
    }
  }
  return undefined;
}
