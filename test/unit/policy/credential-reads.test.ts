import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../daemon/policy/index.js';

const readOnly = { dialect: 'mysql', allowWrite: false } as const;
const writable = { dialect: 'mysql', allowWrite: true } as const;
const pgRead = { dialect: 'postgres', allowWrite: false } as const;

describe('statements that show credentials', () => {
  test.each([
    'SHOW GRANTS',
    'show grants for current_user',
    "SHOW GRANTS FOR 'app'@'%'",
    'SHOW CREATE USER CURRENT_USER',
    "show create user 'root'@'localhost'",
    'SHOW CREATE SERVER s',
    'SELECT * FROM mysql.user',
    'SELECT User, Password FROM `mysql`.`user`',
    'select * from MYSQL . USER',
    'SELECT Priv FROM mysql.global_priv',
    'SELECT * FROM global_priv',
    'SELECT authentication_string FROM user',
    'SELECT Password FROM mysql.servers',
    'SELECT * FROM mysql.password_history',
    'SELECT 1 FROM t WHERE EXISTS (SELECT 1 FROM mysql.user)',
    'DESCRIBE mysql.user',
  ])('%s is refused on read-only and writable MariaDB/MySQL connections', (sql) => {
    for (const options of [readOnly, writable]) {
      const verdict = checkStatement(sql, options);
      expect(verdict).toMatchObject({ ok: false, rule: 'credential-read' });
      if (!verdict.ok) expect(verdict.message).toMatch(/password hash|authentication data|credentials/);
    }
  });

  test('the message says why and what to do instead', () => {
    const verdict = checkStatement('SHOW GRANTS', readOnly);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.message).toMatch(
        /^Refused: SHOW GRANTS shows authentication data \(password hashes or stored passwords\), which hanactl does not return on any connection\. /,
      );
      expect(verdict.hint).toMatch(/information_schema\.USER_PRIVILEGES/);
    }
  });

  test.each([
    'SELECT * FROM information_schema.USER_PRIVILEGES',
    'SELECT * FROM users',
    'SELECT user FROM t',
    'SELECT CURRENT_USER()',
    'SELECT * FROM app.user',
    'SELECT password FROM accounts',
    "SELECT 'mysql.user'",
    'SHOW TABLES',
    'SHOW PRIVILEGES',
    'SHOW CREATE TABLE t',
  ])('%s still runs', (sql) => {
    expect(checkStatement(sql, readOnly)).toEqual({ ok: true, kind: 'read' });
  });

  test.each([
    'SELECT rolname, rolpassword FROM pg_authid',
    'SELECT * FROM pg_catalog.pg_authid',
    'SELECT passwd FROM pg_shadow',
    'SELECT umoptions FROM pg_user_mappings',
    'SELECT umoptions FROM pg_user_mapping',
    'SELECT subconninfo FROM pg_subscription',
  ])('PostgreSQL: %s is refused whatever the role may read', (sql) => {
    for (const options of [pgRead, { ...pgRead, allowWrite: true }]) {
      const verdict = checkStatement(sql, options);
      expect(verdict).toMatchObject({ ok: false });
      if (!verdict.ok) expect(verdict.message).toMatch(/password|credentials/);
    }
  });

  test('PostgreSQL: pg_roles, which masks passwords itself, still runs', () => {
    expect(checkStatement('SELECT rolname, rolpassword FROM pg_roles', pgRead)).toEqual({ ok: true, kind: 'read' });
  });
});
