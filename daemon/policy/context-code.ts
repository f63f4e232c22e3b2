import type { Engine } from '../../shared/connection-url.js';
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

/** Words that may stand between CREATE/ALTER and the object kind. */
const MODIFIERS = new Set([
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

/** Engines where a statement can reach the session's context values from code (not SQLite's function). */
const FORGEABLE: ReadonlySet<Engine> = new Set(['postgres', 'mysql', 'hana']);

/** The code a statement defines or runs, as the refusal names it, or undefined. */
export function codeStatement(tokens: readonly Token[], engine: Engine): string | undefined {
  const at = leadIndex(tokens);
  const lead = tokens[at];
  if (!isWord(lead)) return undefined;
  // An anonymous block (PostgreSQL `DO $$ … $$`, SAP HANA `DO BEGIN … END`); MySQL's DO only evaluates expressions.
  if (lead.text === 'DO') return engine === 'mysql' ? undefined : 'DO';
  if (lead.text !== 'CREATE' && lead.text !== 'ALTER') return undefined;
  for (let i = at + 1; i < Math.min(tokens.length, at + 24); i++) {
    const token = tokens[i] as Token;
    if (isWord(token) && CODE_OBJECTS.has(token.text)) {
      // PostgreSQL's CREATE EVENT TRIGGER and MySQL's CREATE EVENT are both code.
      return `${lead.text} ${token.text === 'EVENT' && isWord(tokens[i + 1], 'TRIGGER') ? 'EVENT TRIGGER' : token.text}`;
    }
    if (isWord(token, 'DEFINER') && isPunct(tokens[i + 1], '=')) {
      // DEFINER = user, user@host or CURRENT_USER[()] (MySQL), in any quoting.
      i += 2;
      if (isPunct(tokens[i + 1], '@')) i += 2;
      if (isPunct(tokens[i + 1], '(') && isPunct(tokens[i + 2], ')')) i += 2;
      continue;
    }
    if (isWord(token) && MODIFIERS.has(token.text)) continue;
    // ALGORITHM = MERGE (MySQL views) and the like.
    if (isPunct(token, '=')) continue;
    return undefined;
  }
  return undefined;
}

/** The refusal of `label` on a connection whose context values are not signed. */
export function contextCodeObjection(label: string, engine: Engine): Objection {
  const sign =
    engine === 'postgres' ? 'ask a person to sign them (hanactl set <connection> --signed-context) or to run it' : 'ask a person to run it';
  return objection(
    'context-code',
    `Refused: ${label} adds or runs code the checks cannot read, and this connection's context values are not signed: such code could set them to another value while it runs.`,
    `Read with plain SQL instead, or ${sign}.`,
  );
}

/** The statement's refusal on a connection with unsigned context values, where that applies. */
export function contextCodeRule(tokens: readonly Token[], engine: Engine, unsignedContext: boolean | undefined): Objection | undefined {
  if (!unsignedContext || !FORGEABLE.has(engine)) return undefined;
  const label = codeStatement(tokens, engine);
  return label ? contextCodeObjection(label, engine) : undefined;
}
