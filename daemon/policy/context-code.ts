import type { DialectPolicy } from './dialects.js';
import { objection } from './objections.js';
import { isPunct, isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * Unsigned context values trust every piece of code that runs in the caller's transaction: a
 * function body can build `set_config('mcp.customer_id', …)` or `SET @mcp_customer_id` from
 * strings at run time, read under the forged value and set the true one back before the check
 * after the statement. The statement checks read the statement, not the bodies of the code it
 * calls. So on a connection whose context values are not signed, an agent may not add code to
 * the database or run code of its own: the routines, triggers, rules and events it would define
 * and the anonymous blocks it would run. Code a person put in the database is theirs to trust.
 */

/** Object kinds whose definition is code that runs later (CREATE / ALTER / CREATE OR REPLACE). */
const CODE_OBJECTS = new Set(['FUNCTION', 'PROCEDURE', 'ROUTINE', 'TRIGGER', 'RULE', 'EVENT', 'PACKAGE', 'LANGUAGE', 'TRANSFORM']);

/** Words that may stand between CREATE/ALTER and any object kind, on any engine. */
const COMMON_MODIFIERS = [
  'OR',
  'REPLACE',
  'DEFINER',
  'SQL',
  'SECURITY',
  'INVOKER',
  'ALGORITHM',
  'UNDEFINED',
  'MERGE',
  'TEMPTABLE',
  'TEMP',
  'TEMPORARY',
];

/** Words that may stand between CREATE/ALTER and the object kind. */
const MODIFIERS = new Set([
  ...COMMON_MODIFIERS,
  'CONSTRAINT',
  'TRUSTED',
  'PROCEDURAL',
  'AGGREGATE',
  'CURRENT_USER',
  'NONEDITIONABLE',
  'EDITIONABLE',
  'IF',
  'NOT',
  'EXISTS',
]);

/**
 * Where a MySQL `DEFINER = user`, `user@host` or `CURRENT_USER[()]` clause (in any quoting) that
 * starts at `i` ends: the index of its last token; undefined when none starts there.
 */
function definerEnd(tokens: readonly Token[], i: number): number | undefined {
  if (!isWord(tokens[i], 'DEFINER') || !isPunct(tokens[i + 1], '=')) return undefined;
  let end = i + 2;
  if (isPunct(tokens[end + 1], '@')) end += 2;
  if (isPunct(tokens[end + 1], '(') && isPunct(tokens[end + 2], ')')) end += 2;
  return end;
}

/** The code a statement defines or runs, as the refusal names it, or undefined. */
export function codeStatement(tokens: readonly Token[], dialect: DialectPolicy): string | undefined {
  const at = leadIndex(tokens);
  const lead = tokens[at];
  if (!isWord(lead)) return undefined;
  // An anonymous block (PostgreSQL `DO $$ … $$`, SAP HANA `DO BEGIN … END`), unless the dialect's DO only evaluates expressions (MySQL).
  if (lead.text === 'DO') return dialect.doEvaluatesExpressions ? undefined : 'DO';
  if (lead.text !== 'CREATE' && lead.text !== 'ALTER') return undefined;
  for (let i = at + 1; i < Math.min(tokens.length, at + 24); i++) {
    const token = tokens[i] as Token;
    if (isWord(token) && CODE_OBJECTS.has(token.text)) {
      // PostgreSQL's CREATE EVENT TRIGGER and MySQL's CREATE EVENT are both code.
      return `${lead.text} ${token.text === 'EVENT' && isWord(tokens[i + 1], 'TRIGGER') ? 'EVENT TRIGGER' : token.text}`;
    }
    const afterDefiner = definerEnd(tokens, i);
    if (afterDefiner !== undefined) {
      i = afterDefiner;
      continue;
    }
    if (isWord(token) && MODIFIERS.has(token.text)) continue;
    // ALGORITHM = MERGE (MySQL views) and the like.
    if (isPunct(token, '=')) continue;
    return undefined;
  }
  return undefined;
}

/**
 * DDL an agent may run where context values are not signed: objects that hold data and
 * expressions the checks read (column defaults, checks, view queries, index expressions), never a
 * reference to a function by name. Everything else CREATE/ALTER names (aggregates, operators,
 * types, casts, domains, collations, conversions, foreign tables and servers, synonyms, ...) is
 * refused: an allow list, since a deny list of code objects misses the next kind that names a
 * function (CREATE AGGREGATE ... (sfunc = set_config)).
 */
const ALLOWED_DDL = new Set(['TABLE', 'INDEX', 'VIEW', 'SEQUENCE', 'SCHEMA', 'DATABASE']);

/** Words that may stand between CREATE/ALTER and an allowed object kind, on any engine. */
const DDL_MODIFIERS = new Set([
  ...COMMON_MODIFIERS,
  'UNLOGGED',
  'GLOBAL',
  'LOCAL',
  'UNIQUE',
  'MATERIALIZED',
  'RECURSIVE',
  'FULLTEXT',
  'SPATIAL',
  'ONLINE',
  'OFFLINE',
  'IGNORE',
  // SAP HANA: CREATE [HISTORY] COLUMN|ROW TABLE, CREATE [UNIQUE] BTREE|CPBTREE|INVERTED ... INDEX.
  'COLUMN',
  'ROW',
  'HISTORY',
  'BTREE',
  'CPBTREE',
  'INVERTED',
  'HASH',
  'VALUE',
  'INDIVIDUAL',
]);

/** `CREATE`/`ALTER` and the word that names what it makes, for a statement outside ALLOWED_DDL; else undefined. */
export function disallowedDdl(tokens: readonly Token[]): string | undefined {
  const at = leadIndex(tokens);
  const lead = tokens[at];
  if (!isWord(lead, 'CREATE', 'ALTER')) return undefined;
  let named: string | undefined;
  for (let i = at + 1; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    const afterDefiner = definerEnd(tokens, i);
    if (afterDefiner !== undefined) {
      i = afterDefiner;
      continue;
    }
    if (isPunct(token, '=')) {
      // ALGORITHM = MERGE (MySQL views): the value is skipped whatever it is.
      i++;
      continue;
    }
    if (isWord(token) && ALLOWED_DDL.has(token.text)) return undefined;
    if (named === undefined && !isWord(token, 'OR', 'REPLACE')) named = (tokens[i] as Token).shown;
    if (isWord(token) && DDL_MODIFIERS.has(token.text)) continue;
    break;
  }
  return `${lead.text} ${(named ?? '').toUpperCase()}`.trim();
}

/** What a person can do instead, on an engine whose context values can be signed (`signable`) or not. */
const signAdvice = (signable: boolean): string =>
  signable ? 'ask a person to sign them (hanactl set <connection> --signed-context) or to run it' : 'ask a person to run it';

/** The refusal of `label` on a connection whose context values are not signed; `signable`: the engine can sign them. */
export function contextCodeObjection(label: string, signable: boolean): Objection {
  const sign = signAdvice(signable);
  return objection(
    'context-code',
    `Refused: ${label} adds or runs code the checks cannot read, and this connection's context values are not signed: such code could set them to another value while it runs.`,
    `Read with plain SQL instead, or ${sign}.`,
  );
}

/** The refusal of DDL outside the allow list on a connection whose context values are not signed. */
export function contextDdlObjection(label: string, signable: boolean): Objection {
  const sign = signAdvice(signable);
  return objection(
    'context-code',
    `Refused: ${label} is not among the statements allowed where context values are not signed (tables, indexes, views, sequences, schemas, databases; COMMENT, GRANT, TRUNCATE, DROP): objects of other kinds can name functions that run later, out of the checks' sight, and could set the values to another one.`,
    `Use a table or a view instead, or ${sign}.`,
  );
}

/**
 * The statement's refusal on a connection with unsigned context values, where code can reach them
 * (the dialect's `codeReachesContext`); `signable`: the engine can sign them instead.
 */
export function contextCodeRule(
  tokens: readonly Token[],
  dialect: DialectPolicy,
  unsignedContext: boolean | undefined,
  signable = false,
): Objection | undefined {
  if (!unsignedContext || !dialect.codeReachesContext) return undefined;
  const label = codeStatement(tokens, dialect);
  if (label) return contextCodeObjection(label, signable);
  const ddl = disallowedDdl(tokens);
  return ddl ? contextDdlObjection(ddl, signable) : undefined;
}
