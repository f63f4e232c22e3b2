import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { assertStatementAllowed, checkStatement } from '../../../../daemon/policy/index.js';
import { ENGINES } from '../../../../shared/connection-url.js';
import { HanactlError } from '../../../../shared/errors.js';

describe('assertStatementAllowed', () => {
  test('returns the kind of an allowed statement', () => {
    expect(assertStatementAllowed('SELECT 1', { dialect: 'sqlite', allowWrite: false })).toBe('read');
    expect(assertStatementAllowed('DELETE FROM t', { dialect: 'sqlite', allowWrite: true })).toBe('write');
  });

  test('throws STATEMENT_REFUSED with the rule and hint in its details', () => {
    let caught: unknown;
    try {
      assertStatementAllowed('UPDATE t SET a = 1', { dialect: 'postgres', allowWrite: false });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HanactlError);
    const err = caught as HanactlError;
    expect(err.code).toBe('STATEMENT_REFUSED');
    expect(err.status).toBe(403);
    expect(err.category).toBe('agent');
    expect(err.message).toMatch(/^Refused: UPDATE changes data, and this connection is read-only\. /);
    expect(err.details).toEqual({ rule: 'write-statement', hint: expect.stringContaining('--allow-write') });
  });
});

describe('checkStatement', () => {
  test('checks a statement under both MySQL string readings when it holds a backslash', () => {
    const sql = "SELECT 'x\\'; DROP TABLE t; -- '";
    expect(checkStatement(sql, { dialect: 'mysql', allowWrite: true })).toMatchObject({ ok: false, rule: 'multiple-statements' });
    expect(checkStatement("SELECT 'it\\'s'", { dialect: 'mysql', allowWrite: false })).toEqual({ ok: true, kind: 'read' });
  });

  test('checks the SQL text handed to query_to_xml as a statement of its own', () => {
    const read = { dialect: 'postgres', allowWrite: false } as const;
    expect(checkStatement("SELECT query_to_xml('SELECT * FROM t', true, false, '')", read).ok).toBe(true);
    expect(checkStatement("SELECT query_to_xml('SELECT pg_sleep(9)', true, false, '')", read)).toMatchObject({
      ok: false,
      rule: 'embedded-sql',
    });
  });
});

const SQL_WORDS = [
  'SELECT',
  'WITH',
  'x',
  'AS',
  '(',
  ')',
  'FROM',
  't',
  'DELETE',
  'UPDATE',
  'SET',
  'INTO',
  '@',
  ':=',
  ';',
  '--',
  '/*',
  '*/',
  "'",
  '"',
  'sleep(1)',
  'FOR',
  'EXPLAIN',
  'ANALYZE',
  'PRAGMA',
  'SHOW',
  '$$',
  '#',
  '1',
];
const sqlish = fc.array(fc.constantFrom(...SQL_WORDS), { maxLength: 14 }).map((w) => w.join(' '));
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), sqlish);
const dialects = fc.constantFrom(...ENGINES);

describe('checkStatement properties', () => {
  test('never throws, and every refusal carries a rule, a message and a hint', () => {
    fc.assert(
      fc.property(anyText, dialects, fc.boolean(), (sql, dialect, allowWrite) => {
        const verdict = checkStatement(sql, { dialect, allowWrite });
        if (!verdict.ok) {
          expect(verdict.rule).toMatch(/^[a-z]+(-[a-z]+)*$/);
          expect(verdict.message.startsWith('Refused: ')).toBe(true);
          expect(verdict.hint).not.toBe('');
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('whatever a read-only connection allows, a writable one allows as a read', () => {
    fc.assert(
      fc.property(anyText, dialects, (sql, dialect) => {
        if (checkStatement(sql, { dialect, allowWrite: false }).ok) {
          expect(checkStatement(sql, { dialect, allowWrite: true })).toEqual({ ok: true, kind: 'read' });
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('whatever a read-only connection allows starts with one of the dialect’s read keywords', () => {
    fc.assert(
      fc.property(sqlish, dialects, (sql, dialect) => {
        if (!checkStatement(sql, { dialect, allowWrite: false }).ok) return;
        const lead = /[A-Za-z]+/.exec(sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|#[^\n]*/g, ' '))?.[0]?.toUpperCase();
        expect(DIALECTS[dialect].reads).toContain(lead);
      }),
      { numRuns: 2000 },
    );
  });
});
