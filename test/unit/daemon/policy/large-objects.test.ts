import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';

/**
 * PostgreSQL's large-object functions: lo_import and lo_export move files on the database host;
 * the others create, open or change a large object, which outlives the call and every role that
 * may read it shares. Both are refused on every connection, each saying which it is.
 */
describe('large-object functions on PostgreSQL', () => {
  const verdict = (sql: string, allowWrite: boolean) => checkStatement(sql, { dialect: 'postgres', allowWrite });

  it.each(["SELECT lo_import('/etc/passwd')", "SELECT lo_export(1, '/tmp/x')"])('%s is refused as reaching host files', (sql) => {
    for (const allowWrite of [false, true]) {
      expect(verdict(sql, allowWrite)).toMatchObject({
        ok: false,
        rule: 'denied-function',
        message: expect.stringMatching(/files on the database host/),
      });
    }
  });

  it.each([
    'SELECT lo_create(0)',
    'SELECT lo_creat(-1)',
    'SELECT lo_open(1, 262144)',
    "SELECT lo_from_bytea(0, 'x')",
    "SELECT lo_put(1, 0, 'x')",
  ])('%s is refused as a large object that outlives the call, not as a host file', (sql) => {
    for (const allowWrite of [false, true]) {
      const v = verdict(sql, allowWrite);
      expect(v).toMatchObject({
        ok: false,
        rule: 'denied-function',
        message: expect.stringMatching(/large object, which outlives the call/),
      });
      expect(v.ok === false && v.message).not.toMatch(/files on the database host/);
    }
  });
});
