import { describe, expect, it } from 'vitest';
import {
  assertSessionKey,
  buildContextCheck,
  buildContextSet,
  buildContextStatements,
  PING_SQL,
  SERVER_VERSION_SQL,
  SESSION_VALUE_MAX_LENGTH,
  SET_TRANSACTION_READ_ONLY,
  SET_TRANSACTION_READ_WRITE,
  sessionValueLiteral,
} from '../../../../../daemon/engines/hana/hana-sql.js';
import { skeletonize } from '../../../../../daemon/policy/index.js';
import { HanactlError } from '../../../../../shared/errors.js';
import { refusal } from './helpers.js';

describe('the fixed statements', () => {
  it('are the HANA forms the driver relies on', () => {
    expect(PING_SQL).toBe('SELECT 1 FROM DUMMY');
    expect(SERVER_VERSION_SQL).toBe('SELECT VERSION FROM SYS.M_DATABASE');
    expect(SET_TRANSACTION_READ_ONLY).toBe('SET TRANSACTION READ ONLY');
    expect(SET_TRANSACTION_READ_WRITE).toBe('SET TRANSACTION READ WRITE');
  });
});

describe('buildContextStatements', () => {
  it('clears every declared name first, then sets the given values as string literals', () => {
    expect(buildContextStatements(['CUSTOMER_ID', 'REGION'], { CUSTOMER_ID: '42', REGION: 'EMEA' })).toEqual([
      "UNSET 'CUSTOMER_ID'",
      "UNSET 'REGION'",
      "SET 'CUSTOMER_ID' = '42'",
      "SET 'REGION' = 'EMEA'",
    ]);
  });

  it('only clears when no value is given', () => {
    expect(buildContextStatements(['CUSTOMER_ID'], {})).toEqual(["UNSET 'CUSTOMER_ID'"]);
    expect(buildContextStatements([], {})).toEqual([]);
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

/** Values chosen to break out of a string literal under any reading a lexer might take. */
const ADVERSARIAL = [
  "x' ; DROP TABLE T; --",
  "'",
  "''",
  "\\'; DELETE FROM T; --",
  '\\',
  "it's 42",
  "' || (SELECT PASSWORD FROM USERS) || '",
  "a'\n; UNSET 'CUSTOMER_ID'; --",
  '/* ; */ -- ',
  '? ?',
  '"; DROP TABLE "T',
  'grüße 🐘 \u202e',
  "'; END; DO BEGIN DELETE FROM T; END; --",
  '\r\n\t',
  "x'".repeat(2000),
];

describe('sessionValueLiteral and buildContextSet', () => {
  it.each(ADVERSARIAL)('keep %j one string literal whose value is the input, exactly', (value) => {
    const sql = buildContextSet('CUSTOMER_ID', value);
    // HANA's lexical rules as the statement policy models them: one statement, four tokens.
    const { statements, unterminated } = skeletonize(sql, 'hana');
    expect(unterminated).toBeUndefined();
    expect(statements).toHaveLength(1);
    const tokens = statements[0]?.tokens ?? [];
    expect(tokens.map((t) => t.kind)).toEqual(['word', 'string', 'punct', 'string']);
    expect(tokens[1]?.text).toBe('CUSTOMER_ID');
    expect(tokens[3]?.text).toBe(value);
  });

  it('doubles single quotes and nothing else', () => {
    expect(sessionValueLiteral('A', "it's")).toBe("'it''s'");
    expect(sessionValueLiteral('A', 'back\\slash')).toBe("'back\\slash'");
  });

  it('refuses a NUL, an empty value and one longer than HANA keeps', () => {
    expect(refusal(() => sessionValueLiteral('A', 'a\0b')).message).toContain('NUL');
    expect(refusal(() => sessionValueLiteral('A', '')).code).toBe('CONTEXT_INVALID');
    expect(refusal(() => sessionValueLiteral('A', 'x'.repeat(SESSION_VALUE_MAX_LENGTH + 1))).code).toBe('CONTEXT_INVALID');
  });
});
