import type { DialectPolicy } from './dialects.js';
import { explainObjection } from './explain.js';
import { categoryObjection, readOnly } from './objections.js';
import { pragmaObjection } from './pragma.js';
import { leadingKind } from './statement-kinds.js';
import { isPunct, isWord, keywordAt, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

const WRITES = ['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'UPSERT', 'REPLACE'];

/** `FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, `FOR KEY SHARE`, `LOCK IN SHARE MODE`, as written. */
function lockingClause(tokens: readonly Token[]): string | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const word = keywordAt(tokens, k);
    if (word === 'LOCK' && isWord(tokens[k + 1], 'IN')) return 'LOCK IN SHARE MODE';
    if (word !== 'FOR' || !isWord(tokens[k + 1], 'UPDATE', 'SHARE', 'NO', 'KEY')) continue;
    const clause = tokens.slice(k, k + 4);
    const end = clause.findIndex((t) => isWord(t, 'UPDATE', 'SHARE'));
    return clause
      .slice(0, end < 0 ? 2 : end + 1)
      .map((t) => t.text)
      .join(' ');
  }
  return undefined;
}

/** A data-modifying keyword inside a query (`WITH x AS (DELETE ...)`); REPLACE( is a function. */
function embeddedWrite(tokens: readonly Token[]): string | undefined {
  for (let k = 0; k < tokens.length; k++) {
    const word = keywordAt(tokens, k);
    if (word && WRITES.includes(word) && !(word === 'REPLACE' && isPunct(tokens[k + 1], '('))) return word;
  }
  return undefined;
}

/** SELECT, WITH, VALUES and TABLE: no locking, no data-modifying part, no INTO. */
function queryObjection(tokens: readonly Token[]): Objection | undefined {
  const locking = lockingClause(tokens);
  if (locking)
    return readOnly('locking-read', `${locking} locks the rows it reads`, 'Drop the locking clause (a plain SELECT reads the same rows)');
  const write = embeddedWrite(tokens);
  if (write) return readOnly('writing-cte', `the query contains ${write}, which changes data`, 'Keep only the SELECT part');
  if (tokens.some((_, k) => keywordAt(tokens, k) === 'INTO')) {
    return readOnly(
      'select-into',
      'SELECT ... INTO stores the result in a table or variable',
      'Drop the INTO clause (the rows come back to you as the result)',
    );
  }
  return undefined;
}

/**
 * The read-only rules: `undefined` when the statement is a read this dialect runs, else the
 * refusal a read-only connection gives. Rules that hold on every connection run before this.
 */
export function readObjection(tokens: readonly Token[], dialect: DialectPolicy): Objection | undefined {
  const at = leadIndex(tokens);
  const lead = tokens[at];
  if (!isWord(lead) || !dialect.reads.includes(lead.text)) {
    const kind = leadingKind(tokens);
    if (kind) return categoryObjection(kind.category, kind.label);
    const what =
      lead?.kind === 'word' ? `${lead.text} does not start a read` : `a statement starting with ${lead?.shown ?? '('} is not a read`;
    return readOnly('unknown-statement', what, `Start with one of ${dialect.reads.join(', ')} instead`);
  }
  switch (lead.text) {
    case 'EXPLAIN':
    case 'DESCRIBE':
    case 'DESC':
      return explainObjection(tokens.slice(at), dialect, (inner) => readObjection(inner, dialect));
    case 'PRAGMA':
      return pragmaObjection(tokens.slice(at));
    case 'SHOW':
      return undefined;
    default:
      return queryObjection(tokens);
  }
}
