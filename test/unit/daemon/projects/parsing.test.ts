import { parse as dotenvParse } from 'dotenv';
import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../../../../daemon/projects/dotenv.js';
import { connectionsFromEnvVars } from '../../../../daemon/projects/env-vars.js';
import { parseJsonText, SourceError } from '../../../../daemon/projects/source-error.js';
import { SECRET } from './setup.js';

describe('.env files', () => {
  it('reads KEY=VALUE lines as dotenv does', () => {
    const vars = parseDotenv(
      [
        '# a comment',
        'export HANA_HOST=host.example.com',
        'HANA_PORT = 30015  # trailing comment',
        `HANA_PASSWORD='${SECRET} # not a comment'`,
        'QUOTED="line one\\nline two"',
        "VCAP_SERVICES='{",
        '  "hana": []',
        "}'",
        'this line is junk',
        '',
      ].join('\n'),
    );
    expect(vars.get('HANA_HOST')).toBe('host.example.com');
    expect(vars.get('HANA_PORT')).toBe('30015');
    expect(vars.get('HANA_PASSWORD')).toBe(`${SECRET} # not a comment`);
    expect(vars.get('QUOTED')).toBe('line one\nline two');
    expect(JSON.parse(vars.get('VCAP_SERVICES') ?? '')).toEqual({ hana: [] });
    expect(vars.has('this')).toBe(false);
  });

  /** The cases where a hand-written reader parted from dotenv, and more; dotenv's answer is the contract. */
  const EDGE_CASES: [string, Record<string, string>][] = [
    ['A=a#b', { A: 'a' }],
    ['A: value', { A: 'value' }],
    ['A="a\\"b"', { A: 'a\\"b' }],
    ['A="unterminated\nB=2', { A: '"unterminated', B: '2' }],
    ['A="q" trailing', { A: '"q" trailing' }],
    ['1A=x', { '1A': 'x' }],
    ['export A=1', { A: '1' }],
    ['A = " spaced " ', { A: ' spaced ' }],
    ['A=`bt`', { A: 'bt' }],
    ["A='s' # c", { A: 's' }],
    ['A="l1\\nl2"', { A: 'l1\nl2' }],
    ["A='x\nB=2'", { A: 'x\nB=2' }],
    ['A', {}],
    ['=x', {}],
    ['A.B-C=1', { 'A.B-C': '1' }],
    ['A=1\r\nB=2', { A: '1', B: '2' }],
    ['A=a # b', { A: 'a' }],
    ['A=1\nA=2', { A: '2' }],
  ];

  it.each(EDGE_CASES)('parses %j exactly as dotenv.parse does', (text, expected) => {
    expect(Object.fromEntries(parseDotenv(text))).toEqual(dotenvParse(text));
    expect(Object.fromEntries(parseDotenv(text))).toEqual(expected);
  });
});

describe('JSON errors', () => {
  it('name the file, line and column, never the text around the mistake', () => {
    const text = `{\n  "password": "${SECRET}" oops\n}`;
    let error: unknown;
    try {
      parseJsonText(text, 'default-env.json');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SourceError);
    expect((error as Error).message).toMatch(/^default-env\.json is not valid JSON \(line 2, column \d+\)\.$/);
    expect((error as Error).message).not.toContain(SECRET);
  });
});

describe('connection variables in .env', () => {
  const vars = (entries: Record<string, string>) => new Map(Object.entries(entries));

  it('maps HANA_* variables to a hana:// target with its options', () => {
    const found = connectionsFromEnvVars(
      vars({
        HANA_HOST: 'h.example.com',
        HANA_PORT: '30041',
        HANA_USER: 'DEV',
        HANA_PASSWORD: SECRET,
        HANA_SCHEMA: 'APP',
        HANA_TENANT: 'HXE',
        HANA_ENCRYPT: 'true',
      }),
      '.env',
      '/p',
    );
    expect(found.candidates).toHaveLength(1);
    const [c] = found.candidates;
    expect(c).toMatchObject({
      name: 'hana',
      target: {
        engine: 'hana',
        host: 'h.example.com',
        port: 30041,
        user: 'DEV',
        database: 'HXE',
        options: { currentSchema: 'APP', encrypt: 'true' },
      },
    });
    expect(c?.password).toBe(SECRET);
    expect(JSON.stringify(found)).not.toContain(SECRET);
  });

  it('reads DATABASE_URL, a relative SQLite path against the project root', () => {
    const found = connectionsFromEnvVars(vars({ DATABASE_URL: 'sqlite:./data/app.db' }), '.env', '/work/p');
    expect(found.candidates[0]).toMatchObject({ name: 'database', target: { engine: 'sqlite', path: '/work/p/data/app.db' } });
    const pg = connectionsFromEnvVars(vars({ DATABASE_URL: `postgres://app:${SECRET}@db:5432/shop` }), '.env', '/p');
    expect(pg.candidates[0]).toMatchObject({ target: { engine: 'postgres', host: 'db', user: 'app', database: 'shop' } });
    expect(pg.candidates[0]?.password).toBe(SECRET);
  });

  it('names a bad DATABASE_URL without echoing it', () => {
    const found = connectionsFromEnvVars(vars({ DATABASE_URL: `postgres://app:${SECRET}@db:99999/x` }), '.env', '/p');
    expect(found.candidates).toEqual([]);
    expect(found.notes.join(' ')).toMatch(/DATABASE_URL in \.env is not a valid connection URL/);
    expect(found.notes.join(' ')).not.toContain(SECRET);
    const odd = connectionsFromEnvVars(vars({ DATABASE_URL: `oracle://u:${SECRET}@h/db` }), '.env', '/p');
    expect(odd.notes.join(' ')).toMatch(/not a URL hanactl reads/);
    expect(odd.notes.join(' ')).not.toContain(SECRET);
  });

  it('prefers VCAP_SERVICES inside .env, as hana-cli loads it', () => {
    const vcap = JSON.stringify({
      postgresql: [{ name: 'pg', credentials: { hostname: 'db', username: 'u', password: SECRET, dbname: 'd' } }],
    });
    const found = connectionsFromEnvVars(vars({ VCAP_SERVICES: vcap, HANA_HOST: 'ignored' }), '.env', '/p');
    expect(found.candidates.map((c) => c.name)).toEqual(['pg']);
  });

  it('says which variable is missing for an incomplete HANA_* set', () => {
    const found = connectionsFromEnvVars(vars({ HANA_HOST: 'h', HANA_PASSWORD: SECRET }), '.env', '/p');
    expect(found.candidates).toEqual([]);
    expect(found.notes.join(' ')).toMatch(/^\.env \(HANA_\* variables\) has no HANA_USER\.$/);
    expect(found.notes.join(' ')).not.toContain(SECRET);
  });
});
