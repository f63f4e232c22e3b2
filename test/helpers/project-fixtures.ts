import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** A file's content as JSON. */
export interface JsonFile {
  readonly kind: 'json';
  readonly value: unknown;
}
/** A symbolic link to `target` (absolute, or relative to the link's folder). */
export interface Link {
  readonly kind: 'link';
  readonly target: string;
}
/** A real SQLite file built by running `sql`. */
export interface SqliteFile {
  readonly kind: 'sqlite';
  readonly sql: string;
}
/** A folder: names to files (text), JSON, links, SQLite files or folders. */
export interface Tree {
  readonly [name: string]: string | JsonFile | Link | SqliteFile | Tree;
}

export const json = (value: unknown): JsonFile => ({ kind: 'json', value });
export const link = (target: string): Link => ({ kind: 'link', target });
export const sqlite = (sql: string): SqliteFile => ({ kind: 'sqlite', sql });

function isEntry(value: unknown): value is JsonFile | Link | SqliteFile {
  const kind = (value as { kind?: unknown }).kind;
  return (kind === 'json' || kind === 'link' || kind === 'sqlite') && Object.keys(value as object).length === 2;
}

/** Writes a tree under `dir` (created), as changesets' test utils build fixtures from literals. */
export function writeTree(dir: string, tree: Tree): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(tree)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    if (typeof value === 'string') writeFileSync(path, value);
    else if (!isEntry(value)) writeTree(path, value);
    else if (value.kind === 'json') writeFileSync(path, JSON.stringify(value.value, null, 2));
    else if (value.kind === 'link') symlinkSync(value.target, path);
    else {
      const Database = require('better-sqlite3-multiple-ciphers');
      const db = new Database(path);
      db.exec(value.sql);
      db.close();
    }
  }
  return dir;
}

/** A fresh temp folder (its real path) for fixtures; `dispose()` removes it. */
export function fixtureRoot(prefix = 'hanactl-project-'): { dir: string; dispose(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A VCAP_SERVICES HANA (HDI) binding as BTP writes it. */
export function hanaBinding(name: string, credentials: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    label: 'hana',
    plan: 'hdi-shared',
    tags: ['hana', 'database', 'relational'],
    credentials: {
      host: 'abc123.hana.prod-eu10.hanacloud.ondemand.com',
      port: '443',
      user: `${name.toUpperCase()}_RT`,
      password: 'hana-secret-not-for-agents',
      schema: `${name.toUpperCase()}_SCHEMA`,
      certificate: '-----BEGIN CERTIFICATE-----\nMIIfake\n-----END CERTIFICATE-----',
      ...credentials,
    },
  };
}

/** A VCAP_SERVICES PostgreSQL binding (hostname, port, username, password, dbname). */
export function postgresBinding(name: string, url: string, password = ''): Record<string, unknown> {
  const u = new URL(url);
  return {
    name,
    label: 'postgresql-db',
    tags: ['postgresql', 'relational'],
    credentials: {
      hostname: u.hostname,
      port: u.port || '5432',
      username: decodeURIComponent(u.username),
      password,
      dbname: u.pathname.slice(1),
    },
  };
}

/** A CAP project on SQLite: `cds.requires.db = {kind: 'sqlite', credentials: {url: 'db.sqlite'}}` and a real db.sqlite. */
export function capSqliteProject(label: string, extra: Tree = {}): Tree {
  return {
    'package.json': json({
      name: `cap-${label}`,
      dependencies: { '@sap/cds': '^8' },
      cds: { requires: { db: { kind: 'sqlite', credentials: { url: 'db.sqlite' } } } },
    }),
    'db.sqlite': sqlite(`CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO books VALUES (1, 'book of ${label}');`),
    db: { 'schema.cds': 'entity Books { key ID: Integer; title: String; }' },
    srv: { 'cat-service.cds': 'service CatalogService {}' },
    ...extra,
  };
}
