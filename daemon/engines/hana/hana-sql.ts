import { HanactlError } from '../../../shared/errors.js';
import { isReservedContextName } from '../context-names.js';

/**
 * Every statement the HANA driver generates, in one place. Statement values are always bound
 * (`?`). The one exception is a context value: SAP HANA documents `SET '<key>' = '<value>'` with
 * string literals only, so the value is written as a literal, quoted by `sessionValueLiteral`
 * and read back with SESSION_CONTEXT before any statement runs.
 */

/** The cheapest round trip through the SQL layer. */
export const PING_SQL = 'SELECT 1 FROM DUMMY';

/** The server's version string (e.g. `2.00.076.00.1705400033`). */
export const SERVER_VERSION_SQL = 'SELECT VERSION FROM SYS.M_DATABASE';

/** Run first in every read-only call, with autocommit off; the transaction is then rolled back. */
export const SET_TRANSACTION_READ_ONLY = 'SET TRANSACTION READ ONLY';

/** Re-asserted before a write when an earlier call may have left the session read-only. */
export const SET_TRANSACTION_READ_WRITE = 'SET TRANSACTION READ WRITE';

/**
 * The cost guard's plan: `EXPLAIN PLAN` stores one row per operator under a statement name made
 * here (letters, digits, `_`; a string literal in HANA's grammar, never taken from the caller).
 */
export function explainPlanSql(statementName: string, sql: string): string {
  if (!/^[A-Z0-9_]{1,64}$/.test(statementName)) throw new Error('A plan statement name must be letters, digits and _.');
  return `EXPLAIN PLAN SET STATEMENT_NAME = '${statementName}' FOR ${sql}`;
}

/** The plan's cost: the largest SUBTREE_COST, which is the root operator's (subtree costs add up toward it). */
export const PLAN_COST_SQL = 'SELECT MAX(SUBTREE_COST) AS COST FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ?';

/** Removes the cost guard's plan rows. */
export const PLAN_DELETE_SQL = 'DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ?';

/** Longest value HANA keeps for a session variable (`M_SESSION_CONTEXT.VALUE` is NVARCHAR(5000)). */
export const SESSION_VALUE_MAX_LENGTH = 5000;

/** Context parameter names as the design fixes them: upper case, at most 30 characters. */
const NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,29}$/;

function contextError(message: string): HanactlError {
  return new HanactlError('CONTEXT_INVALID', message);
}

/** Validates a context parameter name for use as a HANA session-variable key. */
export function assertSessionKey(name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw contextError(
      `The context parameter name ${JSON.stringify(name)} is not usable in SAP HANA; use 1-30 upper-case letters, digits and _, starting with a letter.`,
    );
  }
  if (isReservedContextName(name)) {
    throw contextError(`The context parameter name ${name} is a session variable SAP HANA reserves; choose another name.`);
  }
}

/** The session-variable key as a SQL string literal, after validation (so no quote can occur). */
export function sessionKeyLiteral(name: string): string {
  assertSessionKey(name);
  return `'${name}'`;
}

/**
 * A context value as a SQL string literal for SAP HANA's `SET [SESSION] '<key>' = '<value>'`,
 * whose documented operands are string literals: every `'` is doubled, the only escape a HANA
 * string literal has (a backslash is an ordinary character there). The value is checked first:
 * a string of 1 to 5000 characters without NUL (which no SQL text may carry).
 */
export function sessionValueLiteral(name: string, value: string): string {
  if (typeof value !== 'string' || value.length === 0) throw contextError(`The context parameter ${name} has an empty value.`);
  if (value.length > SESSION_VALUE_MAX_LENGTH) {
    throw contextError(
      `The context parameter ${name} is ${value.length} characters long; SAP HANA keeps at most ${SESSION_VALUE_MAX_LENGTH}.`,
    );
  }
  if (value.includes('\0')) throw contextError(`The context parameter ${name} holds a NUL character, which SAP HANA cannot store.`);
  return `'${value.replaceAll("'", "''")}'`;
}

/** `SET '<NAME>' = '<value>'`: SAP HANA's documented form, the value quoted by `sessionValueLiteral`. */
export function buildContextSet(name: string, value: string): string {
  return `SET ${sessionKeyLiteral(name)} = ${sessionValueLiteral(name, value)}`;
}

/** `UNSET '<NAME>'`. */
export function buildContextUnset(name: string): string {
  return `UNSET ${sessionKeyLiteral(name)}`;
}

/**
 * The statements that put context parameters into a HANA session, in order: first `UNSET`
 * every declared name (so a value can never leak from an earlier borrower), then
 * `SET 'NAME' = '<value>'` for each name that has a value.
 *
 * `names` are the connection's declared names (already trimmed and upper-cased); `values`
 * may hold only declared names. Read in SQL as `SESSION_CONTEXT('NAME')`.
 */
export function buildContextStatements(names: readonly string[], values: Readonly<Record<string, string>>): string[] {
  const declared = [...new Set(names)];
  for (const name of declared) assertSessionKey(name);
  for (const name of Object.keys(values)) {
    if (!declared.includes(name)) throw contextError(`The context parameter ${name} is not declared for this connection.`);
  }
  const statements = declared.map(buildContextUnset);
  for (const name of declared) {
    const value = values[name];
    if (value !== undefined) statements.push(buildContextSet(name, value));
  }
  return statements;
}

/**
 * The query that reads context parameters back just before the statement runs, one column per
 * name, aliased by the name itself: `SELECT SESSION_CONTEXT('CUSTOMER_ID') AS "CUSTOMER_ID" FROM DUMMY`.
 */
export function buildContextCheck(names: readonly string[]): string {
  const columns = names.map((name) => `SESSION_CONTEXT(${sessionKeyLiteral(name)}) AS "${name}"`);
  return `SELECT ${columns.join(', ')} FROM DUMMY`;
}
