import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { checkStatement, skeletonize } from '../../../../daemon/policy/index.js';
import { ENGINES, type Engine } from '../../../../shared/connection-url.js';

const skeleton = (sql: string, dialect: Engine): string => skeletonize(sql, dialect).skeleton;
const count = (sql: string, dialect: Engine): number => skeletonize(sql, dialect).statements.length;

describe('skeletonize, in every dialect', () => {
  test.each(ENGINES)('%s: replaces string literals by a placeholder, so keywords inside them vanish', (dialect) => {
    expect(skeleton("SELECT 'DROP TABLE t; --' FROM t", dialect)).toBe("SELECT '' FROM t");
    expect(skeleton("SELECT 'it''s'", dialect)).toBe("SELECT ''");
  });

  test.each(ENGINES)('%s: drops line and block comments, leaving one space', (dialect) => {
    expect(skeleton('-- lead\nSELECT/* x */1 -- tail', dialect)).toBe('SELECT 1');
    expect(skeleton('SELECT   a,\n\tb FROM t', dialect)).toBe('SELECT a, b FROM t');
  });

  test.each(ENGINES)('%s: counts top-level statements, ignoring empty ones', (dialect) => {
    expect(count('SELECT 1', dialect)).toBe(1);
    expect(count('SELECT 1;  -- done', dialect)).toBe(1);
    expect(count("SELECT 'a;b'", dialect)).toBe(1);
    expect(count('SELECT 1; SELECT 2', dialect)).toBe(2);
    expect(count(' ; ;', dialect)).toBe(0);
  });

  test.each(ENGINES)('%s: reports what an unterminated literal or comment left open', (dialect) => {
    expect(skeletonize("SELECT 'abc", dialect).unterminated).toBe('a string literal');
    expect(skeletonize('SELECT "abc', dialect).unterminated).toBe('a quoted identifier');
    expect(skeletonize('SELECT 1 /* abc', dialect).unterminated).toBe('a /* comment');
    expect(skeletonize('SELECT 1', dialect).unterminated).toBeUndefined();
  });

  test.each(ENGINES)('%s: keeps the name of a quoted identifier, so a quoted function call is still seen', (dialect) => {
    const tokens = skeletonize('SELECT "pg_sleep"(1)', dialect).statements[0]?.tokens ?? [];
    expect(tokens[1]).toMatchObject({ kind: 'quoted', text: 'pg_sleep', shown: '""' });
  });

  test.each(ENGINES)('%s: splits a letter off a number, so 1sleep( still shows sleep(', (dialect) => {
    const words = skeletonize('SELECT 1sleep(5)', dialect).statements[0]?.tokens.map((t) => t.text);
    expect(words).toEqual(['SELECT', '1', 'SLEEP', '(', '5', ')']);
  });
});

describe('skeletonize for PostgreSQL', () => {
  test('treats $$ and $tag$ bodies as strings, so their semicolons do not split', () => {
    expect(skeleton('SELECT $$;DROP TABLE t$$', 'postgres')).toBe("SELECT ''");
    expect(skeleton('SELECT $fn$ a $$ b $fn$, 1', 'postgres')).toBe("SELECT '', 1");
    expect(count('DO $$ BEGIN DELETE FROM t; END $$', 'postgres')).toBe(1);
  });

  test('leaves $1 placeholders and identifiers containing $ alone', () => {
    expect(skeleton('SELECT $1, a$b$ FROM t WHERE x = $2', 'postgres')).toBe('SELECT $1, a$b$ FROM t WHERE x = $2');
  });

  test('nests block comments', () => {
    expect(skeleton('SELECT 1 /* a /* b */ still ; comment */', 'postgres')).toBe('SELECT 1');
  });

  test('reads backslash escapes in E strings only', () => {
    expect(skeleton("SELECT E'it\\'s', 'a\\'", 'postgres')).toBe("SELECT '', ''");
    expect(skeletonize("SELECT e'\\'", 'postgres').unterminated).toBe('a string literal');
  });

  test('always treats -- as a comment and # as an operator', () => {
    expect(skeleton('SELECT 5 # 3 --1', 'postgres')).toBe('SELECT 5 # 3');
  });

  test('marks a U&"..." identifier as opaque, since its escapes could spell any name', () => {
    const tokens = skeletonize('SELECT U&"d\\0061ta"', 'postgres').statements[0]?.tokens ?? [];
    expect(tokens.at(-1)).toMatchObject({ kind: 'quoted', opaque: true });
  });

  test('reports an unterminated dollar quote', () => {
    expect(skeletonize('SELECT $x$ abc', 'postgres').unterminated).toBe('a $x$-quoted string');
  });
});

describe('skeletonize for MySQL and MariaDB', () => {
  test('needs whitespace after -- for a comment, so --1 is arithmetic', () => {
    expect(skeleton('SELECT 1 --1', 'mysql')).toBe('SELECT 1 --1');
    expect(skeleton('SELECT 1 -- 1', 'mysql')).toBe('SELECT 1');
    expect(skeleton('SELECT 1 --\n', 'mysql')).toBe('SELECT 1');
  });

  test('treats # as a line comment', () => {
    expect(skeleton('SELECT 1 # ; DROP TABLE t\n, 2', 'mysql')).toBe('SELECT 1 , 2');
  });

  test('keeps the body of /*! and /*M! executable comments as code', () => {
    expect(skeleton('/*!50000 DROP TABLE t */', 'mysql')).toBe('DROP TABLE t');
    expect(skeleton('/*M!100100 DROP TABLE t */', 'mysql')).toBe('DROP TABLE t');
    expect(skeleton('SELECT /*! STRAIGHT_JOIN */ 1 /* plain */', 'mysql')).toBe('SELECT STRAIGHT_JOIN 1');
    expect(skeletonize('/*! SELECT 1', 'mysql').unterminated).toBe('a /*! comment');
  });

  test('reads backslash escapes in quoted strings', () => {
    expect(skeleton("SELECT 'a\\'; DROP TABLE t; -- ' AS x", 'mysql')).toBe("SELECT '' AS x");
    expect(skeleton('SELECT "a\\"b"', 'mysql')).toBe('SELECT ""');
  });

  test('quotes identifiers with backticks, doubled to escape', () => {
    expect(skeleton('SELECT `a``; DROP TABLE t` FROM t', 'mysql')).toBe('SELECT "" FROM t');
  });
});

describe('skeletonize for SQLite', () => {
  test('quotes identifiers with double quotes, backticks and brackets', () => {
    expect(skeleton('SELECT "a;b", `c;d`, [e;f] FROM [my table]', 'sqlite')).toBe('SELECT "", "", "" FROM ""');
  });

  test('does not nest block comments, and # is no comment', () => {
    expect(skeleton('SELECT 1 /* a /* b */ c */', 'sqlite')).toBe('SELECT 1 c */');
    expect(skeleton('SELECT 1 # 2', 'sqlite')).toBe('SELECT 1 # 2');
  });

  test('has no backslash escapes', () => {
    expect(skeleton("SELECT 'a\\' , 1", 'sqlite')).toBe("SELECT '' , 1");
  });
});

describe('skeletonize for SAP HANA', () => {
  test('quotes identifiers with double quotes, doubled to escape', () => {
    expect(skeleton('SELECT "A""; DROP" FROM "SYS"."TABLES"', 'hana')).toBe('SELECT "" FROM "".""');
  });

  test('keeps -- and /* */ comments, and a string is only closed by a quote', () => {
    expect(skeleton("SELECT 'a\\' FROM DUMMY -- x", 'hana')).toBe("SELECT '' FROM DUMMY");
  });
});

/** A string literal the dialect reads back as `s`, under every string reading it has. */
function stringLiteral(s: string, dialect: Engine): string {
  const backslash = dialect === 'mysql' || dialect === 'postgres';
  return `'${(backslash ? s.replaceAll('\\', '\\\\') : s).replaceAll("'", "''")}'`;
}

const SQL_WORDS = [
  'DROP',
  'TABLE',
  'UPDATE',
  'SET',
  '@x',
  ':=',
  ';',
  '--',
  '#',
  '/*',
  '*/',
  '/*!',
  '$$',
  "'",
  '"',
  '`',
  '[',
  ']',
  '\\',
  '\n',
  'sleep(1)',
  'COMMIT',
  'INTO',
  'OUTFILE',
];
const sqlish = fc.array(fc.constantFrom(...SQL_WORDS), { maxLength: 12 }).map((w) => w.join(' '));
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), sqlish);
const dialects = fc.constantFrom(...ENGINES);

describe('skeletonize properties', () => {
  test('any text inside a properly quoted string literal is one literal and the query stays a read', () => {
    fc.assert(
      fc.property(anyText, dialects, (s, dialect) => {
        const sql = `SELECT ${stringLiteral(s, dialect)} AS x`;
        expect(skeleton(sql, dialect)).toBe("SELECT '' AS x");
        const verdict = checkStatement(sql, { dialect, allowWrite: false });
        // PostgreSQL accepts no NUL anywhere in a statement, not even inside a string.
        if (dialect === 'postgres' && s.includes('\u0000')) expect(verdict).toMatchObject({ ok: false, rule: 'nul-character' });
        // MySQL's second layer refuses the words that reach host files anywhere, strings included.
        else if (dialect === 'mysql' && /outfile|dumpfile/i.test(s)) expect(verdict).toMatchObject({ ok: false, rule: 'host-access' });
        else expect(verdict).toEqual({ ok: true, kind: 'read' });
      }),
      { numRuns: 500 },
    );
  });

  test('any text inside a block or line comment vanishes', () => {
    fc.assert(
      fc.property(anyText, dialects, (s, dialect) => {
        const body = s.replaceAll('*', '').replaceAll('/', '');
        const line = s.replaceAll(/[\n\r\0]/g, ''); // engines end a line comment at NUL too
        expect(skeleton(`SELECT 1 /* ${body} */`, dialect)).toBe('SELECT 1');
        expect(skeleton(`-- ${line}\nSELECT 1`, dialect)).toBe('SELECT 1');
      }),
      { numRuns: 500 },
    );
  });
});
