import { objection } from './objections.js';
import { callName, isPunct } from './tokens.js';
import type { Objection, Token, Verdict } from './types.js';

/** PostgreSQL functions that run SQL text, with how many of their leading arguments are SQL. */
export const RUNS_SQL_TEXT: ReadonlyMap<string, number> = new Map([
  ['query_to_xml', 1],
  ['query_to_xmlschema', 1],
  ['query_to_xml_and_xmlschema', 1],
  ['ts_stat', 1],
  ['crosstab', 2],
  ['crosstab2', 1],
  ['crosstab3', 1],
  ['crosstab4', 1],
]);

/**
 * The first `count` top-level arguments of the call whose `(` is at `open`. Stops there, so nested
 * calls of these functions cost the text's length once, not once per level.
 */
function callArguments(tokens: readonly Token[], open: number, count: number): Token[][] {
  const args: Token[][] = [[]];
  let depth = 0;
  for (let i = open + 1; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (isPunct(token, '(')) depth++;
    else if (isPunct(token, ')') && --depth < 0) break;
    if (depth === 0 && isPunct(token, ',')) {
      if (args.length === count) break;
      args.push([]);
    } else args.at(-1)?.push(token);
  }
  return args;
}

const unchecked = (name: string): Objection =>
  objection(
    'embedded-sql',
    `Refused: ${name}() runs SQL text that cannot be checked here.`,
    'Pass the query as one plain string literal, or run the query itself.',
  );

/**
 * A function that runs SQL text (query_to_xml, ts_stat, crosstab) is allowed when each SQL
 * argument is one plain string literal that passes `check` on its own; SQL text built at run time
 * cannot be checked and is refused. The first SQL argument must be such a literal.
 */
export function embeddedSql(tokens: readonly Token[], check: (sql: string) => Verdict): Objection | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const name = callName(tokens, k);
    const count = name === undefined ? undefined : RUNS_SQL_TEXT.get(name);
    if (name === undefined || count === undefined) continue;
    const args = callArguments(tokens, k + 1, count);
    for (const [index, arg] of args.entries()) {
      const [text, ...rest] = arg;
      if (index > 0 && text?.kind === 'number' && rest.length === 0) continue; // crosstab(sql, n)
      if (text?.kind !== 'string' || text.opaque || rest.length > 0) return unchecked(name);
      const verdict = check(text.text);
      if (!verdict.ok && verdict.rule === 'too-complex') return verdict;
      if (!verdict.ok) {
        return objection(
          'embedded-sql',
          `Refused: ${name}() runs the SQL text it is given, and that text is refused (${verdict.rule}).`,
          verdict.hint,
        );
      }
    }
  }
  return undefined;
}
