import { describe, expect, it } from 'vitest';
import { formatTarget, parseConnectionUrl, redactUrl, type Target } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import { assertConnectionName } from '../../../shared/names.js';

function thrown(fn: () => unknown): HanactlError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HanactlError);
    return err as HanactlError;
  }
  throw new Error('expected an error');
}

const BASE = '/home/ana/project';

describe('parseConnectionUrl: SQLite', () => {
  it.each([
    ['sqlite:data.db', '/home/ana/project/data.db'],
    ['sqlite:./data.db', '/home/ana/project/data.db'],
    ['sqlite:../shared/data.db', '/home/ana/shared/data.db'],
    ['sqlite:/var/lib/app/data.db', '/var/lib/app/data.db'],
    ['sqlite:///var/lib/app/data.db', '/var/lib/app/data.db'],
    ['sqlite://./data.db', '/home/ana/project/data.db'],
    ['sqlite:my%20file.db', '/home/ana/project/my file.db'],
    ['SQLite:/var/x.db', '/var/x.db'],
  ])('resolves %s to %s', (url, path) => {
    expect(parseConnectionUrl(url, BASE).target).toEqual({ engine: 'sqlite', scheme: 'sqlite', path, options: {} });
  });

  it('resolves a relative path against the caller’s folder, not the process’s', () => {
    expect(parseConnectionUrl('sqlite:a.db', '/one').target.path).toBe('/one/a.db');
    expect(parseConnectionUrl('sqlite:a.db', '/two').target.path).toBe('/two/a.db');
  });

  it('keeps :memory: as it is', () => {
    expect(parseConnectionUrl('sqlite::memory:', BASE).target.path).toBe(':memory:');
  });

  it('keeps query options apart from the path', () => {
    expect(parseConnectionUrl('sqlite:/var/x.db?mode=ro', BASE).target).toEqual({
      engine: 'sqlite',
      scheme: 'sqlite',
      path: '/var/x.db',
      options: { mode: 'ro' },
    });
  });

  it('has no password for a SQLite file', () => {
    expect(parseConnectionUrl('sqlite:/var/x.db', BASE).password).toBeUndefined();
  });

  it.each([['sqlite:'], ['sqlite://'], ['sqlite:?mode=ro']])('refuses %s, which has no file path', (url) => {
    const err = thrown(() => parseConnectionUrl(url, BASE));
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toMatch(/needs a file path/);
  });
});

describe('parseConnectionUrl: servers', () => {
  it.each([
    ['postgres://app@db.example/shop', 'postgres', 'postgres', 5432],
    ['postgresql://app@db.example/shop', 'postgres', 'postgresql', 5432],
    ['mysql://app@db.example/shop', 'mysql', 'mysql', 3306],
    ['mariadb://app@db.example/shop', 'mysql', 'mariadb', 3306],
    ['hana://app@db.example/shop', 'hana', 'hana', 30015],
  ])('reads %s as engine %s with the default port', (url, engine, scheme, port) => {
    expect(parseConnectionUrl(url).target).toEqual({
      engine,
      scheme,
      host: 'db.example',
      port,
      user: 'app',
      database: 'shop',
      options: {},
    });
  });

  it('keeps an explicit port', () => {
    expect(parseConnectionUrl('postgres://app@db.example:6543/shop').target.port).toBe(6543);
  });

  it('reads a HANA tenant and its options', () => {
    const { target } = parseConnectionUrl('hana://SYSTEM@hxe.local:39041/HXE?encrypt=true&sslValidateCertificate=false');
    expect(target).toEqual({
      engine: 'hana',
      scheme: 'hana',
      host: 'hxe.local',
      port: 39041,
      user: 'SYSTEM',
      database: 'HXE',
      options: { encrypt: 'true', sslValidateCertificate: 'false' },
    });
  });

  it('leaves the database out when the URL names none', () => {
    const { target } = parseConnectionUrl('hana://SYSTEM@hxe.local:30015');
    expect(target).not.toHaveProperty('database');
    expect(parseConnectionUrl('hana://SYSTEM@hxe.local:30015/').target).not.toHaveProperty('database');
  });

  it('leaves the user out when the URL names none', () => {
    expect(parseConnectionUrl('postgres://db.example/shop').target).not.toHaveProperty('user');
  });

  it.each([
    ['postgres://app@[::1]:6543/shop', '::1', 6543],
    ['postgres://app@[2001:db8::7]/shop', '2001:db8::7', 5432],
  ])('reads the IPv6 host of %s without brackets', (url, host, port) => {
    const { target } = parseConnectionUrl(url);
    expect(target.host).toBe(host);
    expect(target.port).toBe(port);
  });

  it('decodes a percent-encoded user, password and database', () => {
    const parsed = parseConnectionUrl('postgres://ana%40corp:p%40ss%3Aw%2Fo%25rd@db.example/my%20db');
    expect(parsed.target.user).toBe('ana@corp');
    expect(parsed.password).toBe('p@ss:w/o%rd');
    expect(parsed.target.database).toBe('my db');
  });

  it('returns a password found in the URL beside the target, never inside it', () => {
    const parsed = parseConnectionUrl('mysql://app:hunter2@db.example/shop');
    expect(parsed.password).toBe('hunter2');
    expect(JSON.stringify(parsed.target)).not.toContain('hunter2');
  });

  it('accepts surrounding whitespace and an upper-case scheme', () => {
    expect(parseConnectionUrl('  POSTGRES://app@db.example/shop \n').target).toMatchObject({ engine: 'postgres', host: 'db.example' });
  });
});

describe('parseConnectionUrl: refusals', () => {
  it.each([
    ['ftp://app@db.example/shop', /Unknown URL scheme "ftp:"/],
    ['db.example/shop', /Unknown URL scheme \(none\)/],
    ['mongodb://app@db.example/shop', /Unknown URL scheme "mongodb:"/],
    ['', /The connection URL is empty/],
    ['   ', /The connection URL is empty/],
    ['postgres:///shop', /The postgres URL has no host/],
    ['postgres://app@/shop', /The postgres URL has no host/],
    ['mysql://app:pw@:3306/shop', /The mysql URL has no host/],
    ['hana://:30015', /The hana URL has no host/],
    ['postgres://app@db.example:0/shop', /Port 0 is out of range/],
    ['postgres://app@db.example:70000/shop', /The port in the postgres URL is not a number from 1 to 65535/],
    ['mysql://app@[::1]:99999/shop', /The port in the mysql URL is not a number from 1 to 65535/],
    ['postgres://app@db.example:port/shop', /The port in the postgres URL is not a number from 1 to 65535/],
    ['postgres://app@db.example:-1/shop', /The port in the postgres URL is not a number from 1 to 65535/],
    ['postgres://app@db.ex ample/shop', /"postgres:\/\/app@db.ex ample\/shop" is not a valid URL/],
    ['postgres:app@db.example/shop', /A postgres URL starts with postgres:\/\//],
    ['postgres://app@db.example/shop?password=x', /Do not put a password in the URL's query \("password"\)/],
    ['mysql://app@db.example/shop?pwd=x', /\("pwd"\)/],
    ['hana://app@db.example/HXE?sslKeyPassword=x', /\("sslKeyPassword"\)/],
    ['postgres://app@db.example/shop?secret=x', /\("secret"\)/],
    ['postgres://app@db.example/shop/public', /The path "\/shop\/public" holds more than one segment/],
    ['postgres://app@db.example/%E0%A4%A', /The database name in the URL has a malformed %-escape/],
    ['postgres://app%ZZ@db.example/shop', /The user in the URL has a malformed %-escape/],
    ['sqlite:bad%ZZpath.db', /malformed %-escape/],
  ])('refuses %j with INVALID_URL and a message naming the problem', (url, message) => {
    const err = thrown(() => parseConnectionUrl(url, BASE));
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toMatch(message);
    // Every refusal shows what a good URL looks like.
    expect(err.message).toMatch(/Examples: sqlite:/);
  });

  it('never repeats the password of a URL it cannot parse', () => {
    for (const url of [
      'postgres://app:pl4nted-url-secret@db ex/shop',
      'postgres://app:pl4nted-url-secret@db.example:port/shop',
      'postgres://app:pl4nted-url-secret@/shop',
      // Unencoded / and digits: a naive parser would read part of the password as a port.
      'postgres://app:pl4nted/url-secret@db.example/shop',
      'postgres://app:424242/pl4nted@db.example/shop',
    ]) {
      const err = thrown(() => parseConnectionUrl(url));
      expect(err.code).toBe('INVALID_URL');
      for (const part of ['pl4nted', 'url-secret', '424242']) expect(err.message).not.toContain(part);
    }
    expect(thrown(() => parseConnectionUrl('postgres://app:424242/pl4nted@db.example/shop')).message).toMatch(/percent-encode/);
    expect(thrown(() => parseConnectionUrl('postgres://app:pl4nted-url-secret@db ex/shop')).message).toContain('app:***@');
  });
});

describe('formatTarget', () => {
  it('never shows the password', () => {
    const { target, password } = parseConnectionUrl('postgres://app:pl4nted-format-secret@db.example/shop');
    expect(password).toBe('pl4nted-format-secret');
    expect(formatTarget(target)).toBe('postgres://app@db.example:5432/shop');
  });

  it('shows the default port and the scheme as the person wrote it', () => {
    expect(formatTarget(parseConnectionUrl('mariadb://app@db.example/shop').target)).toBe('mariadb://app@db.example:3306/shop');
  });

  it('brackets an IPv6 host and sorts options', () => {
    expect(formatTarget(parseConnectionUrl('postgres://app@[::1]/shop?sslmode=require&application_name=x').target)).toBe(
      'postgres://app@[::1]:5432/shop?application_name=x&sslmode=require',
    );
  });

  it.each([
    'sqlite:/var/lib/app/data.db',
    'sqlite:/var/lib/app/data.db?mode=ro',
    'sqlite::memory:',
    'sqlite:/var/lib/my app/data.db',
    'sqlite:/var/lib/app/100%25.db',
    'sqlite:/var/lib/app/what%3F.db?mode=ro',
    'postgres://app@db.example:5432/shop',
    'postgresql://app@db.example:6543/shop?sslmode=verify-full',
    'postgres://ana%40corp@db.example:5432/my%20db',
    'postgres://db.example:5432',
    'mysql://app@[2001:db8::7]:3306/shop',
    'mariadb://root@localhost:3307/test',
    'hana://SYSTEM@hxe.local:39041/HXE?encrypt=true&sslValidateCertificate=false',
    'hana://DBADMIN@abc.hana.prod.example:443?encrypt=true',
  ])('round-trips %s', (url) => {
    const target: Target = parseConnectionUrl(url, BASE).target;
    const shown = formatTarget(target);
    expect(parseConnectionUrl(shown, '/elsewhere').target).toEqual(target);
    expect(formatTarget(parseConnectionUrl(shown, '/elsewhere').target)).toBe(shown);
  });
});

describe('redactUrl', () => {
  it('replaces the password of a URL-shaped string with ***', () => {
    expect(redactUrl('postgres://app:hunter2@db.example/shop')).toBe('postgres://app:***@db.example/shop');
    expect(redactUrl('failed: mysql://root:p%40ss@h:3306/x and more')).toBe('failed: mysql://root:***@h:3306/x and more');
  });

  it('leaves a URL without a password alone', () => {
    expect(redactUrl('postgres://app@db.example:5432/shop')).toBe('postgres://app@db.example:5432/shop');
    expect(redactUrl('sqlite:/var/x.db')).toBe('sqlite:/var/x.db');
  });
});

describe('assertConnectionName', () => {
  it.each(['prod', 'sales-eu_2', 'A', 'x'.repeat(64), '0-_'])('accepts %j', (name) => {
    expect(() => assertConnectionName(name)).not.toThrow();
  });

  it('refuses a name of 65 characters, saying how long it is and the limit', () => {
    const err = thrown(() => assertConnectionName('n'.repeat(65)));
    expect(err.code).toBe('INVALID_NAME');
    expect(err.message).toBe('The connection name is 65 characters long; the limit is 64.');
  });

  it.each([
    ['my db', '" "'],
    ['sales.eu', '"."'],
    ['a/b', '"/"'],
    ['ünïcode', '"ü"'],
    ['ok;DROP', '";"'],
    ['tab\there', '"\\t"'],
  ])('refuses %j, naming the character %s', (name, shown) => {
    const err = thrown(() => assertConnectionName(name));
    expect(err.code).toBe('INVALID_NAME');
    expect(err.message).toContain(`contains ${shown}`);
    expect(err.message).toMatch(/use only letters, digits, - and _/);
  });

  it.each([[''], [undefined], [42]])('refuses %j as no name at all', (name) => {
    const err = thrown(() => assertConnectionName(name));
    expect(err.code).toBe('INVALID_NAME');
    expect(err.message).toMatch(/A connection name is required/);
  });
});

describe('parseConnectionUrl: query options', () => {
  it.each([
    ['sqlite:./data.db?cache=shared', 'SQLite', 'cache', 'mode'],
    ['postgres://app@db.example/shop?sslmod=require', 'PostgreSQL', 'sslmod', 'sslmode, application_name, search_path, schema'],
    ['postgres://app@db.example/shop?options=-c%20default_transaction_read_only%3Doff', 'PostgreSQL', 'options', 'sslmode'],
    ['mysql://app@db.example/shop?multipleStatements=true', 'MySQL/MariaDB', 'multipleStatements', 'ssl, sslmode, ssl-mode'],
    ['mariadb://app@db.example/shop?allowPublicKeyRetrieval=true', 'MySQL/MariaDB', 'allowPublicKeyRetrieval', 'socket'],
    ['hana://app@db.example:30015/HXE?encrypt=true&bogus=1', 'SAP HANA', 'bogus', 'encrypt, sslValidateCertificate'],
    ['hana://app@db.example:30015/HXE?connectTimeout=1', 'SAP HANA', 'connectTimeout', 'currentSchema'],
  ])('refuses %j: an unknown option is named with the ones the engine has', (url, engine, option, listed) => {
    const err = thrown(() => parseConnectionUrl(url, BASE));
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toContain(`The ${engine} URL option "${option}" is not supported; the options are: `);
    expect(err.message).toContain(listed);
  });

  it.each([
    'sqlite:./data.db?mode=ro',
    'postgres://app@db.example/shop?sslmode=verify-full&application_name=x&search_path=a&schema=b',
    'mysql://app@db.example/shop?ssl-mode=REQUIRED&sslca=/ca.pem&socket=/run/mysqld.sock',
    'hana://app@db.example:30015/HXE?ENCRYPT=true&sslvalidatecertificate=false&schema=S&validate_certificate=true',
  ])('accepts the documented options of %j (HANA in any case)', (url) => {
    expect(() => parseConnectionUrl(url, BASE)).not.toThrow();
  });

  it('lists every option the HANA driver passes to its client, and no other', async () => {
    const { HANA_URL_OPTIONS } = await import('../../../daemon/engines/hana/connect-options.js');
    const { URL_OPTIONS } = await import('../../../shared/connection-url.js');
    const aliases = ['schema', 'validate_certificate', 'hostname_in_certificate'];
    expect([...URL_OPTIONS.hana].sort()).toEqual([...Object.keys(HANA_URL_OPTIONS), ...aliases].sort());
  });
});
