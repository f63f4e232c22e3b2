import { describe, expect, test } from 'vitest';
import { judgeDefinition } from '../../../../daemon/engines/mysql/mysql-routines.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const plain: PolicyOptions = { dialect: 'mysql', allowWrite: false };
const writable: PolicyOptions = { dialect: 'mysql', allowWrite: true };
const does = (body: string, kind: 'FUNCTION' | 'PROCEDURE' | 'VIEW' = 'FUNCTION'): string | undefined =>
  judgeDefinition({ kind, schema: 'shop', name: 'f', security: 'DEFINER', body }).does;

/**
 * MySQL/MariaDB DEFAULT(col) evaluates the column's default from the table's definition, which
 * may be NEXT VALUE FOR a sequence (a write the text does not name).
 */
describe('MySQL/MariaDB DEFAULT(col)', () => {
  test.each([
    'SELECT DEFAULT(b) FROM td_b',
    'SELECT default (b) FROM td_b',
    'SELECT DEFAULT/* c */(`b`) FROM td_b',
    'SELECT 1 FROM td_b WHERE DEFAULT(td_b.b) > 0',
    'SELECT x, -DEFAULT(b) FROM td_b',
    'SELECT /*!DEFAULT(b)*/ FROM td_b',
    'SELECT (SELECT DEFAULT(b) FROM td_b LIMIT 1)',
    'WITH c AS (SELECT DEFAULT(b) AS d FROM td_b) SELECT d FROM c',
    'VALUES (1), ((SELECT DEFAULT(b) FROM td_b LIMIT 1))',
    'DO DEFAULT(b)',
  ])('refused on a read-only connection, a write on a writable one: %s', (sql) => {
    const verdict = checkStatement(sql, plain);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.message).toMatch(/DEFAULT\(column\)/);
    const write = checkStatement(sql, writable);
    expect(write.ok && write.kind).toBe('write');
  });

  test.each([
    "SELECT 'DEFAULT(b)', `default` FROM td_b",
    'SELECT b AS `DEFAULT` FROM td_b',
    'SELECT column_default FROM information_schema.COLUMNS',
  ])('passes where DEFAULT( is not the call: %s', (sql) => {
    expect(checkStatement(sql, plain).ok).toBe(true);
  });

  test.each([
    'RETURN (SELECT DEFAULT(b) FROM db.td_b LIMIT 1)',
    'BEGIN DECLARE x BIGINT DEFAULT (SELECT DEFAULT(b) FROM td_b LIMIT 1); RETURN x; END',
    'BEGIN DECLARE x BIGINT DEFAULT 1 + DEFAULT(b); RETURN x; END',
    'BEGIN DECLARE x INT; DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET x = DEFAULT(b); RETURN x; END',
    'BEGIN DECLARE c CURSOR FOR SELECT DEFAULT(b) FROM td_b; RETURN 1; END',
    'BEGIN DECLARE x INT; SET x = DEFAULT(b); RETURN x; END',
    'BEGIN DECLARE x INT; SELECT DEFAULT(b) INTO x FROM td_b LIMIT 1; RETURN x; END',
    'BEGIN IF DEFAULT(b) > 0 THEN RETURN 1; END IF; RETURN 0; END',
  ])('a body that calls it is judged not a read: %s', (body) => {
    expect(does(body)).toMatch(/DEFAULT\(column\)/);
  });

  test('a view whose definition calls it is judged not a read', () => {
    expect(does('SELECT DEFAULT(b) AS d FROM td_b', 'VIEW')).toMatch(/DEFAULT\(column\)/);
  });

  test.each([
    'BEGIN DECLARE x INT DEFAULT (5); RETURN x; END',
    'BEGIN DECLARE x, y DECIMAL(10,2) DEFAULT (1 + 2); RETURN x; END',
    'BEGIN DECLARE x INT DEFAULT(5); DECLARE y INT DEFAULT (x * 2); RETURN y; END',
    'BEGIN DECLARE x VARCHAR(5) CHARACTER SET utf8mb4 DEFAULT (CONCAT(\'a\', \'b\')); RETURN x; END',
  ])('a declaration default is not the call: %s', (body) => {
    expect(does(body)).toBeUndefined();
  });
});
