import { describe, expect, it } from 'vitest';
import { withoutTrailingSemicolons } from '../../../daemon/catalog/catalog-sql.js';
import { connectError as hanaConnectError } from '../../../daemon/engines/hana/hana-errors.js';
import { connectError as mysqlConnectError } from '../../../daemon/engines/mysql/mysql-errors.js';
import { maskCredentials } from '../../../daemon/engines/mysql/mysql-types.js';
import { DRIVER_MESSAGE_CHARS, normaliseConnectError } from '../../../daemon/engines/scrub.js';
import { checkStatement } from '../../../daemon/policy/index.js';
import { toConnectionName } from '../../../daemon/projects/candidate.js';
import { redactUrl } from '../../../shared/connection-url.js';
import { hanaEndpointDefaults } from '../../../shared/hana-endpoint.js';
import { capQuoted, isWhitespace, QUOTE_CHARS, trimEndWhere, trimWhere } from '../../../shared/linear-text.js';

/**
 * Every function below once ran a backtracking regex (`/[\s;]+$/`, `/\.?\s*$/`, `/^-+|-+$/g`, ...)
 * over text an agent controls, which takes quadratic time: a megabyte of the shapes here held the
 * event loop for minutes to hours. Each is fed a megabyte of its worst shape; a scan finishes in
 * milliseconds, the regex would not finish within the test's timeout.
 */
const MB = 1024 * 1024;

describe('linear text helpers', () => {
  it('trimEndWhere looks at each trailing character once', () => {
    let looked = 0;
    const text = `x${' ;'.repeat(MB / 2)}`;
    const drop = (ch: string) => {
      looked++;
      return ch === ';' || isWhitespace(ch);
    };
    expect(trimEndWhere(text, drop)).toBe('x');
    expect(looked).toBe(MB + 1);
    expect(trimEndWhere('a;\t\u00a0\u2028', (ch) => ch === ';' || isWhitespace(ch))).toBe('a');
    expect(trimEndWhere('', isWhitespace)).toBe('');
  });

  it('trimWhere trims both ends', () => {
    expect(trimWhere('--a-b--', (ch) => ch === '-')).toBe('a-b');
    expect(trimWhere('----', (ch) => ch === '-')).toBe('');
  });

  it('isWhitespace is the set \\s matches, one code unit at a time', () => {
    for (let code = 0; code < 0x10000; code++) {
      const ch = String.fromCharCode(code);
      expect(isWhitespace(ch), `U+${code.toString(16)}`).toBe(/\s/.test(ch));
    }
    expect(isWhitespace('  ')).toBe(false);
  });

  it('capQuoted cuts long text, says how much, and never splits a surrogate pair', () => {
    expect(capQuoted('short')).toBe('short');
    const long = 'x'.repeat(MB);
    expect(capQuoted(long)).toBe(`${'x'.repeat(QUOTE_CHARS)}… (${MB - QUOTE_CHARS} more characters)`);
    const emoji = `${'x'.repeat(QUOTE_CHARS - 1)}😀😀`;
    expect(capQuoted(emoji)).toBe(`${'x'.repeat(QUOTE_CHARS - 1)}… (4 more characters)`);
  });
});

describe('functions that see agent text take linear time on their worst shapes', () => {
  it('explain_query trims trailing semicolons and whitespace', () => {
    expect(withoutTrailingSemicolons('SELECT 1 ; ;\n')).toBe('SELECT 1');
    expect(withoutTrailingSemicolons("SELECT ';'")).toBe("SELECT ';'");
    const spaces = `SELECT '${' '.repeat(MB)}x'`;
    expect(withoutTrailingSemicolons(spaces)).toBe(spaces);
    expect(withoutTrailingSemicolons(`SELECT 1${'; '.repeat(MB / 2)}`)).toBe('SELECT 1');
  });

  it("PostgreSQL's parser message is trimmed and quoted at most 200 characters", () => {
    for (const sql of [`SELECT 'x' '${' '.repeat(MB)}x'`, `SELECT 'x' '${'. '.repeat(MB / 2)}x'`, `SELECT 1 "${' '.repeat(MB)}x" 2`]) {
      const verdict = checkStatement(sql, { dialect: 'postgres', allowWrite: false });
      expect(verdict.ok).toBe(false);
      if (verdict.ok) continue;
      expect(verdict.rule).toBe('parser-rejects');
      expect(verdict.message).toMatch(/^Refused: PostgreSQL's parser could not read this statement: syntax error at or near /);
      expect(verdict.message.length).toBeLessThan(QUOTE_CHARS + 300);
    }
    const quoting = checkStatement(`SELECT 'x' '${' '.repeat(MB)}x'`, { dialect: 'postgres', allowWrite: false });
    expect(quoting.ok ? '' : quoting.message).toMatch(/ at or near "' +… \(\d+ more characters\)\. Write it/);
  });

  it('URL passwords are redacted by a scan', () => {
    expect(redactUrl('a postgres://u:p@h/d and mysql://v:q@h2 end')).toBe('a postgres://u:***@h/d and mysql://v:***@h2 end');
    expect(redactUrl('//:@')).toBe('//:***@');
    expect(redactUrl('x //a:b c //d:e@f')).toBe('x //a:b c //d:***@f');
    expect(redactUrl('///u:p@h')).toBe('///u:***@h');
    expect(redactUrl('//u:p:q@h //u2:p2@h2')).toBe('//u:***@h //u2:***@h2');
    const shape = `${'//:'.repeat(MB / 3)}\t//:@`;
    expect(redactUrl(shape)).toBe(`${'//:'.repeat(MB / 3)}\t//:***@`);
  });

  it('connect errors are scrubbed whole, then cut', () => {
    const secret = 's3cret-password';
    const raw = `invalid input syntax for type integer: "${'x'.repeat(DRIVER_MESSAGE_CHARS - 60)}${secret}${'y'.repeat(MB)}"`;
    const err = normaliseConnectError(new Error(raw), 'CONNECT_FAILED', [secret]);
    expect(err.message).not.toContain('s3cret');
    expect(err.message).toMatch(/… \(\d+ more characters\)$/);
    expect(err.message.length).toBeLessThan(DRIVER_MESSAGE_CHARS + 40);
  });

  it('HANA and MySQL error sentences end in one full stop', () => {
    const where = { serverNode: 'h:30015', timeoutMs: 1000 };
    expect(hanaConnectError(new Error('refused. \n'), where, []).message).toContain('refused. ');
    expect(hanaConnectError(new Error('no reason'), where, []).message).toContain('no reason. ');
    const ctx = { where: 'h:3306', connectTimeoutMs: 1000 };
    expect(mysqlConnectError(new Error('Access denied. \t'), ctx, []).message).toContain('Access denied');
    const long = `near '${' '.repeat(MB)}\u0000 '`;
    expect(hanaConnectError(new Error(long), where, []).message).toMatch(/more characters\)$/);
    expect(mysqlConnectError(new Error(long), ctx, []).message).toMatch(/more characters\)/);
  });

  it('MySQL credential masking masks quoted values after IDENTIFIED BY, closed or not', () => {
    expect(maskCredentials("CREATE USER `a`@`%` IDENTIFIED BY PASSWORD '*AB' REQUIRE NONE")).toBe(
      "CREATE USER `a`@`%` IDENTIFIED BY PASSWORD '***' REQUIRE NONE",
    );
    expect(maskCredentials("x IDENTIFIED VIA ed25519 USING 'a''b\\'c' OR unix_socket")).toBe(
      "x IDENTIFIED VIA ed25519 USING '***' OR unix_socket",
    );
    expect(maskCredentials("IDENTIFIED BY 'unclosed")).toBe("IDENTIFIED BY '***'");
    const shape = `IDENTIFIED BY ${"'\\'".repeat(MB / 3)}\n'\\'`;
    expect(maskCredentials(shape)).toMatch(/^IDENTIFIED BY '\*\*\*'/);
  });

  it('names from project files lose leading and trailing dashes', () => {
    expect(toConnectionName('--my db--', 'x')).toBe('my-db');
    expect(toConnectionName('----', 'fallback')).toBe('fallback');
    expect(toConnectionName(`\u0000${'-'.repeat(MB)}-\u0000`, 'fallback')).toBe('fallback');
  });

  it('HANA Cloud hosts are recognised by a scan over labels', () => {
    expect(hanaEndpointDefaults('abc.hana.eu10.hanacloud.ondemand.com', undefined)).toEqual({ port: 443, encrypt: true });
    expect(hanaEndpointDefaults('abc.HANA.ondemand.com', undefined)).toEqual({ port: 443, encrypt: true });
    expect(hanaEndpointDefaults('hana.ondemand.com', undefined)).toEqual({ port: 30015, encrypt: false });
    expect(hanaEndpointDefaults('a.hana.x_y.ondemand.com', undefined)).toEqual({ port: 30015, encrypt: false });
    expect(hanaEndpointDefaults('a.hana.ondemand.com.evil', undefined)).toEqual({ port: 30015, encrypt: false });
    expect(hanaEndpointDefaults(`${'.HANA.H'.repeat(MB / 7)}..HANA.ONDEMAND.COM`, undefined).port).toBe(443);
    expect(hanaEndpointDefaults(`${'.hana.h'.repeat(MB / 7)}!.ondemand.com`, undefined).port).toBe(30015);
  });
});
