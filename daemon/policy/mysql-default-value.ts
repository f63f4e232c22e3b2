import { readOnly } from './objections.js';
import { isPunct, isWord } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * Whether the `DEFAULT` at `k` is the default of a local variable declaration in a routine body
 * (`DECLARE x INT DEFAULT (expr)`): walking back at its own depth, the statement starts with
 * DECLARE, declares no handler or cursor, and no other DEFAULT comes between. Anything else, an
 * unbalanced `(` on the way back included, is an expression, where `DEFAULT(` is the call.
 * Declarations without DECLARE (sql_mode ORACLE sections) are read as calls: refused, not passed.
 */
function declaresDefault(tokens: readonly Token[], k: number): boolean {
  let depth = 0;
  for (let i = k - 1; i >= 0; i--) {
    const token = tokens[i];
    if (isPunct(token, ')')) depth++;
    else if (isPunct(token, '(')) {
      if (depth === 0) return false;
      depth--;
    } else if (depth > 0) continue;
    else if (isPunct(token, ';')) return false;
    else if (isWord(token, 'DEFAULT', 'HANDLER', 'CURSOR', 'CONDITION')) return false;
    else if (isWord(token, 'DECLARE') && !isPunct(tokens[i - 1], '.')) return true;
  }
  return false;
}

/**
 * MySQL/MariaDB `DEFAULT(col)` (sql_yacc.yy `DEFAULT '(' simple_ident ')'`, Item_default_value)
 * evaluates the column's default expression from the table's definition, which may write
 * (`NEXT VALUE FOR seq` advances a sequence) without the statement naming it. Refused on read-only
 * connections wherever it is written; `VALUES (DEFAULT)` in an INSERT is a write anyway, and a
 * column's or variable's `DEFAULT (expr)` in DDL is DDL.
 */
export function mysqlDefaultValueObjection(tokens: readonly Token[]): Objection | undefined {
  for (let k = 0; k + 1 < tokens.length; k++) {
    if (!isWord(tokens[k], 'DEFAULT') || !isPunct(tokens[k + 1], '(') || isPunct(tokens[k - 1], '.')) continue;
    if (declaresDefault(tokens, k)) continue;
    return readOnly(
      'denied-function',
      "DEFAULT(column) evaluates the column's default expression, which may write (NEXT VALUE FOR a sequence)",
      'Select the column, or read its default from information_schema.COLUMNS',
    );
  }
  return undefined;
}
