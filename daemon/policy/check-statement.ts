import { HanactlError } from '../../shared/errors.js';
import { hostAccessAnywhere, sessionChangeAnywhere } from './anywhere-rules.js';
import { deniedFunction } from './denied-functions.js';
import { DIALECTS, type DialectPolicy } from './dialects.js';
import { embeddedSql } from './embedded-sql.js';
import { type Lexed, lex } from './lexer.js';
import { CATEGORIES, categoryObjection, objection } from './objections.js';
import { readObjection } from './read-rules.js';
import { splitStatements } from './skeletonize.js';
import { leadingKind } from './statement-kinds.js';
import type { PolicyOptions, Verdict } from './types.js';

/** One reading of the input through the rule chain. */
function judge(lexed: Lexed, dialect: DialectPolicy, options: PolicyOptions): Verdict {
  if (lexed.unterminated) {
    return objection(
      'unterminated',
      `Refused: the text ends inside ${lexed.unterminated}.`,
      'Close it, or remove it, and send the statement again.',
    );
  }
  const [tokens, ...more] = splitStatements(lexed.tokens, dialect.sqlscriptBlocks);
  if (!tokens) {
    return objection('empty', 'Refused: there is no statement to run; the text is empty or only comments.', 'Send one SQL statement.');
  }
  if (more.length > 0) {
    return objection(
      'multiple-statements',
      `Refused: the text holds ${more.length + 1} statements, and a call runs exactly one.`,
      'Send each statement in its own call.',
    );
  }
  const lead = leadingKind(tokens);
  const refusal =
    (lead && CATEGORIES[lead.category].always ? categoryObjection(lead.category, lead.label) : undefined) ??
    sessionChangeAnywhere(tokens, dialect) ??
    hostAccessAnywhere(tokens) ??
    deniedFunction(tokens, options.allowWrite) ??
    embeddedSql(tokens, (sql) => checkStatement(sql, { ...options, allowWrite: false }));
  if (refusal) return refusal;
  // On a writable connection this decides the kind: anything the read-only rules refuse is a write.
  const readRefusal = deniedFunction(tokens, false) ?? readObjection(tokens, dialect);
  if (!readRefusal) return { ok: true, kind: 'read' };
  return options.allowWrite ? { ok: true, kind: 'write' } : readRefusal;
}

/**
 * Judges one SQL text before any connection is borrowed. Pure: no I/O, never throws.
 *
 * Read-only connections run only reads (SELECT, WITH, VALUES, TABLE, EXPLAIN of a read, SHOW,
 * DESCRIBE, reporting PRAGMAs, per dialect). Writable connections run anything else too, except
 * what no connection runs: more than one statement, transaction control, session and context
 * changes, host file or program access, explicit locks, server administration and the denied
 * functions. A text containing a backslash must also pass under the dialect's other string
 * readings (MySQL NO_BACKSLASH_ESCAPES, PostgreSQL standard_conforming_strings off).
 */
export function checkStatement(sql: string, options: PolicyOptions): Verdict {
  const dialect = DIALECTS[options.dialect];
  const verdict = judge(lex(sql, dialect.syntax), dialect, options);
  if (!verdict.ok || !sql.includes('\\')) return verdict;
  let kind = verdict.kind;
  for (const syntax of dialect.alternatives) {
    const reading = lex(sql, syntax);
    if (reading.unterminated) continue; // the engine cannot parse it that way either
    const other = judge(reading, dialect, options);
    if (!other.ok) return other;
    if (other.kind === 'write') kind = 'write';
  }
  return { ok: true, kind };
}

/**
 * Returns the statement's kind, or throws HanactlError `STATEMENT_REFUSED` whose message is the
 * refusal sentence and whose details carry `{rule, hint}`. Fits the daemon's StatementPolicy.check.
 */
export function assertStatementAllowed(sql: string, options: PolicyOptions): 'read' | 'write' {
  const verdict = checkStatement(sql, options);
  if (!verdict.ok) throw new HanactlError('STATEMENT_REFUSED', verdict.message, { rule: verdict.rule, hint: verdict.hint });
  return verdict.kind;
}
