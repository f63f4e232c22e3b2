import { describe, expect, it } from 'vitest';
import {
  assertSessionKey,
  buildContextCheck,
  buildContextStatements,
  PING_SQL,
  SERVER_VERSION_SQL,
  SESSION_RESET_STATEMENTS,
  SESSION_VALUE_MAX_LENGTH,
  SET_TRANSACTION_READ_ONLY,
  SET_TRANSACTION_READ_WRITE,
} from '../../../daemon/drivers/hana/hana-sql.js';
import { HanactlError } from '../../../shared/errors.js';
import { refusal } from './helpers.js';

describe('the fixed statements', () => {
  it('are the HANA forms the driver relies on', () => {
    expect(PING_SQL).toBe('SELECT 1 FROM DUMMY');
    expect(SERVER_VERSION_SQL).toBe('SELECT VERSION FROM SYS.M_DATABASE');
    expect(SET_TRANSACTION_READ_ONLY).toBe('SET TRANSACTION READ ONLY');
    expect(SET_TRANSACTION_READ_WRITE).toBe('SET TRANSACTION READ WRITE');
  });

  it('leave session resetting empty until context clearing lands', () => {
    expect(SESSION_RESET_STATEMENTS).toEqual([]);
  });
});

describe('buildContextStatements', () => {
  it('clears every declared name first, then sets the given values, bound', () => {
    expect(buildContextStatements(['CUSTOMER_ID', 'REGION'], { CUSTOMER_ID: '42', REGION: 'EMEA' })).toEqual([
      { sql: "UNSET 'CUSTOMER_ID'", params: [] },
      { sql: "UNSET 'REGION'", params: [] },
      { sql: "SET 'CUSTOMER_ID' = ?", params: ['42'] },
      { sql: "SET 'REGION' = ?", params: ['EMEA'] },
    ]);
  });

  it('only clears when no value is given', () => {
    expect(buildContextStatements(['CUSTOMER_ID'], {})).toEqual([{ sql: "UNSET 'CUSTOMER_ID'", params: [] }]);
    expect(buildContextStatements([], {})).toEqual([]);
  });

  it('never puts a value into the SQL text', () => {
    const hostile = "x' ; DROP TABLE T; --";
    const statements = buildContextStatements(['CUSTOMER_ID'], { CUSTOMER_ID: hostile });
    for (const s of statements) expect(s.sql).not.toContain('DROP');
    expect(statements.at(-1)?.params).toEqual([hostile]);
  });

  it('states each repeated name once', () => {
    expect(buildContextStatements(['A', 'A'], { A: '1' })).toHaveLength(2);
  });

  it.each([["A'B"], ['lower'], ['1ABC'], ['A B'], [''], ['A'.repeat(31)]])('refuses the name %j', (name) => {
    const err = refusal(() => buildContextStatements([name], {}));
    expect(err.code).toBe('CONTEXT_INVALID');
  });

  it('accepts a 30-character name', () => {
    expect(() => assertSessionKey('A'.repeat(30))).not.toThrow();
  });

  it.each([['APPLICATIONUSER'], ['APPLICATION'], ['LOCALE'], ['XS_APPLICATIONUSER'], ['SAP_PASSPORT']])(
    'refuses the reserved session variable %s',
    (name) => {
      const err = refusal(() => buildContextStatements([name], { [name]: 'x' }));
      expect(err.code).toBe('CONTEXT_INVALID');
      expect(err.message).toContain(name);
    },
  );

  it('refuses a value for an undeclared name, naming it', () => {
    const err = refusal(() => buildContextStatements(['A'], { B: '1' }));
    expect(err.code).toBe('CONTEXT_INVALID');
    expect(err.message).toContain('B');
  });

  it('refuses empty and over-long values, naming the parameter', () => {
    expect(refusal(() => buildContextStatements(['A'], { A: '' })).message).toContain('A');
    const long = refusal(() => buildContextStatements(['LONG_ONE'], { LONG_ONE: 'x'.repeat(SESSION_VALUE_MAX_LENGTH + 1) }));
    expect(long.code).toBe('CONTEXT_INVALID');
    expect(long.message).toContain('LONG_ONE');
    expect(buildContextStatements(['A'], { A: 'x'.repeat(SESSION_VALUE_MAX_LENGTH) })).toHaveLength(2);
  });
});

describe('buildContextCheck', () => {
  it('reads every name back in one query, one column per name', () => {
    expect(buildContextCheck(['CUSTOMER_ID', 'REGION'])).toBe(
      `SELECT SESSION_CONTEXT('CUSTOMER_ID') AS "CUSTOMER_ID", SESSION_CONTEXT('REGION') AS "REGION" FROM DUMMY`,
    );
  });

  it('refuses a name that could break out of the literal', () => {
    expect(() => buildContextCheck(["X') FROM DUMMY; --"])).toThrow(HanactlError);
  });
});
