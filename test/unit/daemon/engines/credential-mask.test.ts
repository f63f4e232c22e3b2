import { describe, expect, test } from 'vitest';
import { maskCellValue, maskSecretText } from '../../../../daemon/engines/credential-mask.js';

const SCRAM = 'SCRAM-SHA-256$4096:c2FsdHNhbHQ=$Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmE=:YmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4YmE=';

describe('credential masking in result cells', () => {
  test.each([
    ['a SCRAM verifier alone', SCRAM, 'Zm9vYmFy'],
    ['a SCRAM verifier inside XML', `<row><rolpassword>${SCRAM}</rolpassword></row>`, 'Zm9vYmFy'],
    ['SCRAM verifiers in a statistics array', `{${SCRAM},${SCRAM.replace('Zm9v', 'QUJD')}}`, 'QUJD'],
    ['an md5 hash', 'md5a3556571e93b0d20722ba62be61e8c2d', 'a3556571e93b0d20722ba62be61e8c2d'],
    ['a MySQL native hash in JSON text', '{"authentication_string":"*477A6DCD4E0F2D4D6C84AE1E38AB0DD6F5D6EE0E"}', '477A6DCD'],
    [
      'an ed25519 value in JSON text',
      '{"authentication_string": "ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY", "plugin": "ed25519"}',
      'ZIgUREUg5',
    ],
    ['a user-mapping option', 'password=FdwPassw0rd!', 'FdwPassw0rd'],
    ['an options array as text', '{user=x,password=FdwPassw0rd!}', 'FdwPassw0rd'],
    ['an options array element with a comma', '{user=x,"password=Fdw,Passw0rd!"}', 'Passw0rd'],
    ['a connection string', 'host=db user=app password=S3cret! dbname=x', 'S3cret'],
    ['a quoted connection-string value', "host=db password='S3 cret' dbname=x", 'cret'],
    ['ALTER ROLE ... PASSWORD', "ALTER ROLE app PASSWORD 'LeakMe123'", 'LeakMe123'],
    ['ENCRYPTED PASSWORD in double quotes', 'CREATE ROLE app LOGIN ENCRYPTED PASSWORD "LeakMe123"', 'LeakMe123'],
    ['a dollar-quoted password', 'ALTER ROLE app PASSWORD $x$LeakMe123$x$', 'LeakMe123'],
    ['an E string password', "ALTER ROLE app PASSWORD E'Leak\\'Me123'", 'Me123'],
    ['PASSWORD()', "SET PASSWORD FOR 'atk'@'%' = PASSWORD('LeakMe123')", 'LeakMe123'],
    ['SET PASSWORD =', "SET PASSWORD FOR 'atk'@'%' = 'LeakMe123'", 'LeakMe123'],
    ['IDENTIFIED BY in double quotes', 'CREATE USER a IDENTIFIED BY "LeakMe123"', 'LeakMe123'],
    ['IDENTIFIED VIA ... USING', "CREATE USER a IDENTIFIED VIA ed25519 USING 'ZIgUREUg5PVgQ6Lskh' OR unix_socket", 'ZIgUREUg5'],
    ['MASTER_PASSWORD', "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD='LeakMe123'", 'LeakMe123'],
    ['OPTIONS (PASSWORD ...)', "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (USER 'u', PASSWORD 'LeakMe123')", 'LeakMe123'],
    ['a mapping with a doubled quote', "CREATE USER MAPPING FOR x SERVER s OPTIONS (password 'Leak''Me123')", 'Me123'],
    ['an unterminated password', "ALTER ROLE app PASSWORD 'LeakMe123", 'LeakMe123'],
  ])('%s is masked', (_, text, secret) => {
    const masked = maskSecretText(text);
    expect(masked).not.toContain(secret);
    expect(masked).toMatch(/\*\*\*/);
  });

  // A statement quoted inside a string (the process list, an engine status report, a log line kept
  // as text): the password sits one quoting level or more deeper, by doubling or by backslash.
  test.each([
    ['IDENTIFIED BY, doubled quotes', `'CREATE USER a IDENTIFIED BY ''Hunter2-Secret'' '`, `'CREATE USER a IDENTIFIED BY ''***'' '***'`],
    ['IDENTIFIED BY, doubled, text after', `x 'GRANT ALL TO a IDENTIFIED BY ''Hunter2-Secret'' WITH GRANT OPTION' y`],
    ['IDENTIFIED BY, backslash', String.raw`'CREATE USER a IDENTIFIED BY \'Hunter2-Secret\''`],
    ['IDENTIFIED BY, double quotes doubled', `"CREATE USER a IDENTIFIED BY ""Hunter2-Secret"""`],
    ['IDENTIFIED BY, double quotes backslashed', String.raw`{"sql": "CREATE USER a IDENTIFIED BY \"Hunter2-Secret\""}`],
    ['IDENTIFIED BY, two levels doubled', `'EXECUTE ''CREATE USER a IDENTIFIED BY ''''Hunter2-Secret'''''''`],
    ['IDENTIFIED BY, two levels backslashed', String.raw`'x = \'CREATE USER a IDENTIFIED BY \\\'Hunter2-Secret\\\'\''`],
    ['IDENTIFIED BY, backslash then doubled', String.raw`'q = \'ALTER USER a IDENTIFIED BY ''Hunter2-Secret''\''`],
    ['IDENTIFIED BY, backticks doubled', '`ALTER USER a IDENTIFIED BY ``Hunter2-Secret```'],
    ['PASSWORD(), doubled', `'SET PASSWORD FOR a = PASSWORD(''Hunter2-Secret'')'`, `'SET PASSWORD FOR a = PASSWORD(''***'')'`],
    ['PASSWORD(), backslash', String.raw`'SET PASSWORD = PASSWORD(\'Hunter2-Secret\')'`],
    ['password = "..."', 'password = "Hunter2-Secret"', 'password = "***"'],
    ['password = \\"...\\" in JSON text', String.raw`{"conf": "password = \"Hunter2-Secret\""}`],
    ['a JSON key, backslash-quoted', String.raw`{"conf": "{\"password\": \"Hunter2-Secret\"}"}`],
    ['a JSON key, doubled quotes', `'{""password"": ""Hunter2-Secret""}'`],
    ['ALTER ROLE PASSWORD, doubled', `'ALTER ROLE app PASSWORD ''Hunter2-Secret'' VALID UNTIL ''infinity'''`],
    ['a doubled quote inside the nested password', `'ALTER ROLE app PASSWORD ''Hunter2''''-Secret'''`],
    ['a backslashed quote inside the nested password', String.raw`'ALTER USER a IDENTIFIED BY \'Hunter2\\\'-Secret\''`],
    ['an E string, nested', String.raw`'ALTER ROLE app PASSWORD E''Hunter2\''-Secret'''`],
    ['a nested value past the window', `'ALTER ROLE app PASSWORD ''${'x'.repeat(400)}Hunter2-Secret'''`],
  ])('nested quoting is masked: %s', (_, text, expected?: string) => {
    const masked = maskSecretText(text);
    expect(masked).not.toContain('Hunter2');
    expect(masked).not.toContain('Secret');
    expect(masked).toContain('***');
    if (expected !== undefined) expect(masked).toBe(expected);
  });

  test('masks the password an engine status report quotes, and keeps the rest readable', () => {
    const report = `MySQL thread id 84, root Updating
ALTER USER 'app'@'%' IDENTIFIED BY 'Hunter2-Secret'
---TRANSACTION 2, query 'SET PASSWORD FOR b = PASSWORD(''Hunter2-Secret'')' ACTIVE 3 sec`;
    const masked = maskSecretText(report);
    expect(masked).not.toContain('Hunter2');
    expect(masked).toContain('MySQL thread id 84, root Updating');
  });

  test.each([
    'plain text',
    'SELECT rolpassword FROM pg_roles',
    'SET PASSWORD FOR',
    'the password_history table',
    'Passwords must be long.',
    'md5 of nothing',
  ])('%s is left as it is', (text) => {
    expect(maskSecretText(text)).toBe(text);
  });

  test('keeps the statement around the secret readable', () => {
    expect(maskSecretText("ALTER ROLE app PASSWORD 'LeakMe123' VALID UNTIL 'infinity'")).toBe(
      "ALTER ROLE app PASSWORD '***' VALID UNTIL 'infinity'",
    );
    expect(maskSecretText(`x ${SCRAM} y`)).toBe('x *** (password hash hidden) y');
  });

  test('masks arrays, JSON objects and keys that name a secret', () => {
    expect(
      maskCellValue({ user: 'a', authentication_string: 'ZIgUREUg5PVgQ6LskhXmO', nested: ['password=x1', { Password: 'p' }], n: 1 }),
    ).toEqual({ user: 'a', authentication_string: '***', nested: ['password=***', { Password: '***' }], n: 1 });
    expect(maskCellValue(['user=x', 'password=FdwPassw0rd!'])).toEqual(['user=x', 'password=***']);
    expect(maskCellValue(7)).toBe(7);
    expect(maskCellValue(null)).toBeNull();
  });

  test('is linear: a megabyte of repeated triggers is masked within a stall bound (linear, not quadratic)', () => {
    for (const unit of ["PASSWORD '", 'password=', 'IDENTIFIED BY ', 'SCRAM-SHA-256$', 'md5', '$a', "E'"]) {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
      const started = performance.now();
      maskSecretText(text);
      expect(performance.now() - started, unit).toBeLessThan(2000); // quadratic would take minutes
    }
  });
});
