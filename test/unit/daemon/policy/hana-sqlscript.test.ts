import { describe, expect, test } from 'vitest';
import { checkStatement, skeletonize } from '../../../../daemon/policy/index.js';

const writable = { dialect: 'hana', allowWrite: true } as const;
const readOnly = { dialect: 'hana', allowWrite: false } as const;

describe('SAP HANA SQLScript blocks', () => {
  test.each([
    'DO BEGIN INSERT INTO T VALUES (1); UPDATE T SET A = 2; END',
    'DO BEGIN INSERT INTO T VALUES (1); END;',
    'DO BEGIN DECLARE N INT := 0; N := :N + 1; INSERT INTO T VALUES (:N); END',
    'DO BEGIN IF 1 = 1 THEN INSERT INTO T VALUES (1); END IF; END',
    'DO BEGIN FOR I IN 1..3 DO INSERT INTO T VALUES (:I); END FOR; WHILE 1 = 0 DO SELECT 1 FROM DUMMY; END WHILE; END',
    'DO BEGIN SELECT CASE WHEN A = 1 THEN 2 ELSE 3 END AS X FROM T; BEGIN INSERT INTO T VALUES (1); END; END',
    'DO BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN SELECT 1 FROM DUMMY; END; INSERT INTO T VALUES (1); END',
    'DO (IN P INT => ?) BEGIN INSERT INTO T VALUES (:P); END',
    'CREATE PROCEDURE P1 LANGUAGE SQLSCRIPT AS BEGIN INSERT INTO T VALUES (1); DELETE FROM T WHERE A = 0; END',
    'CREATE OR REPLACE FUNCTION F1 () RETURNS TABLE (A INT) LANGUAGE SQLSCRIPT AS BEGIN RETURN SELECT A FROM T; END',
    "CREATE TRIGGER TR1 AFTER INSERT ON T FOR EACH ROW BEGIN INSERT INTO LOG VALUES ('x;y'); END",
  ])('runs %j as one statement on a writable connection', (sql) => {
    expect(checkStatement(sql, writable)).toEqual({ ok: true, kind: 'write' });
  });

  test.each([
    ['DO BEGIN INSERT INTO T VALUES (1); END; DELETE FROM T', 'multiple-statements'],
    ['DO BEGIN INSERT INTO T VALUES (1); DELETE FROM T', 'multiple-statements'],
    ['DO BEGIN INSERT INTO T VALUES (1); END; END; DELETE FROM T', 'multiple-statements'],
    ['SELECT 1 AS BEGIN FROM DUMMY; DELETE FROM T', 'multiple-statements'],
    ['SELECT T.BEGIN FROM T; DELETE FROM T; SELECT T.END FROM T', 'multiple-statements'],
    ['INSERT INTO T VALUES (1); DO BEGIN DELETE FROM T; END', 'multiple-statements'],
    ["DO BEGIN SET 'CUSTOMER_ID' = '2'; END", 'session-change'],
    ["DO BEGIN UNSET 'CUSTOMER_ID'; END", 'session-change'],
  ])('still refuses %j (%s)', (sql, rule) => {
    expect(checkStatement(sql, writable)).toMatchObject({ ok: false, rule });
  });

  test('refuses a block on a read-only connection, as any procedure', () => {
    expect(checkStatement('DO BEGIN SELECT 1 FROM DUMMY; END', readOnly)).toMatchObject({ ok: false, rule: 'procedure-call' });
  });

  test('splits plain HANA SQL on every semicolon, as before', () => {
    expect(skeletonize('SELECT 1 FROM DUMMY; SELECT 2 FROM DUMMY', 'hana').statements).toHaveLength(2);
    expect(skeletonize('DO BEGIN SELECT 1 FROM DUMMY; END; SELECT 2 FROM DUMMY', 'hana').statements.map((s) => s.text)).toEqual([
      'DO BEGIN SELECT 1 FROM DUMMY; END',
      'SELECT 2 FROM DUMMY',
    ]);
  });

  test('leaves the other dialects splitting on every semicolon', () => {
    expect(checkStatement('DO BEGIN INSERT INTO t VALUES (1); END', { dialect: 'mysql', allowWrite: true })).toMatchObject({
      ok: false,
      rule: 'multiple-statements',
    });
  });
});
