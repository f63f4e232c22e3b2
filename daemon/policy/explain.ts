import type { DialectPolicy } from './dialects.js';
import { objection } from './objections.js';
import { closingParen, isPunct, isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/** Words between EXPLAIN and the statement it explains (PostgreSQL, MySQL, SQLite options). */
const OPTIONS = new Set(
  'ANALYZE ANALYSE VERBOSE COSTS BUFFERS TIMING SUMMARY SETTINGS WAL GENERIC_PLAN MEMORY SERIALIZE FORMAT EXTENDED PARTITIONS QUERY PLAN TRUE FALSE ON OFF JSON TREE TRADITIONAL TEXT XML YAML'.split(
    ' ',
  ),
);
/** Words that start an explainable statement. */
const STARTS = new Set('SELECT WITH VALUES TABLE INSERT UPDATE DELETE MERGE REPLACE UPSERT CREATE DECLARE EXECUTE'.split(' '));

const isAnalyze = (t: Token): boolean => isWord(t, 'ANALYZE', 'ANALYSE');

/**
 * EXPLAIN / DESCRIBE on a read-only connection: allowed when what it explains is a read.
 * `tokens` start at the verb; `readObjection` judges the explained statement. HANA's
 * `EXPLAIN PLAN` writes EXPLAIN_PLAN_TABLE and is left to the explain_query tool.
 */
export function explainObjection(
  tokens: readonly Token[],
  dialect: DialectPolicy,
  readObjection: (inner: readonly Token[]) => Objection | undefined,
): Objection | undefined {
  if (isWord(tokens[0], 'EXPLAIN') && isWord(tokens[1], 'PLAN')) {
    return objection(
      'explain-plan',
      'Refused: EXPLAIN PLAN writes its result into EXPLAIN_PLAN_TABLE, so run_query does not run it.',
      'Use the explain_query tool, which reads the plan for you.',
    );
  }
  let analyze = false;
  let k = 1;
  while (k < tokens.length) {
    const token = tokens[k] as Token;
    if (isPunct(token, '(') && isWord(tokens[k + 1]) && !STARTS.has(tokens[k + 1]?.text ?? '')) {
      const close = closingParen(tokens, k);
      analyze ||= tokens.slice(k, close).some(isAnalyze);
      k = close + 1;
    } else if ((isWord(token) && OPTIONS.has(token.text)) || isPunct(token, '=')) {
      analyze ||= isAnalyze(token);
      k++;
    } else break;
  }
  const inner = tokens.slice(k);
  const head = inner[leadIndex(inner)];
  const verb = tokens[0]?.text ?? 'EXPLAIN';
  if (head?.kind === 'word' && ['EXPLAIN', 'DESCRIBE', 'DESC'].includes(head.text)) {
    // No engine explains an EXPLAIN; refusing here also keeps the check from recursing per EXPLAIN.
    return objection(
      'explain-nested',
      `Refused: ${verb} of an ${verb} is not a statement the database runs.`,
      'Explain the query itself, once.',
    );
  }
  if (!head || (dialect.explainNamesTable && !(isWord(head) && STARTS.has(head.text)))) return undefined;
  const refused = readObjection(inner);
  if (!refused) return undefined;
  if (analyze) {
    return objection(
      'explain-analyze',
      `Refused: EXPLAIN ANALYZE runs the statement it explains, and that statement is not a read (${refused.rule}).`,
      'Use EXPLAIN without ANALYZE, or explain a plain SELECT.',
    );
  }
  return objection(
    'explain-write',
    `Refused: on a read-only connection EXPLAIN is only run for reads, and this statement is not one (${refused.rule}).`,
    'Explain the SELECT part instead, or use the explain_query tool.',
  );
}
