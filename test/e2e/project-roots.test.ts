import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { capSqliteProject, fixtureRoot, hanaBinding, json, sqlite, writeTree } from '../helpers/project-fixtures.js';
import { type RootsShimHandle, startRootsShim } from '../helpers/roots-client.js';

const SECRET = 'e2e-planted-hdi-password-51c0';
const base = fixtureRoot();
const home = new TestHome({ extraEnv: { HOME: join(base.dir, 'home') } });
const alpha = writeTree(join(base.dir, 'alpha'), capSqliteProject('alpha'));
const beta = writeTree(join(base.dir, 'beta'), {
  'package.json': json({ name: 'beta' }),
  '.env': 'DATABASE_URL=sqlite:./data.db\n',
  'data.db': sqlite("CREATE TABLE books (title TEXT); INSERT INTO books VALUES ('book of beta');"),
});
const empty = writeTree(join(base.dir, 'empty'), { 'package.json': json({ name: 'no-db' }) });
const delta = writeTree(join(base.dir, 'delta'), capSqliteProject('delta'));
const hanacli = writeTree(join(base.dir, 'hanacli'), {
  'package.json': json({ name: 'hana-cli-style' }),
  'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('my-hdi', { password: SECRET })] } }),
  '.env': `DATABASE_URL=sqlite:./data.db\nHANA_PASSWORD=${SECRET}\n`,
  'data.db': sqlite('CREATE TABLE t (x INTEGER);'),
});
const registryDb = join(base.dir, 'registry-book.db');
writeTree(base.dir, { 'registry-book.db': sqlite("CREATE TABLE books (title TEXT); INSERT INTO books VALUES ('registry book');") });

const title = async (shim: RootsShimHandle) => {
  const result = await shim.call('run_query', { sql: 'SELECT title FROM books' });
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as { rows: { title: string }[] }).rows[0]?.title;
};

afterAll(() => base.dispose());

describe('a session follows its editor’s MCP roots to the project’s own database', () => {
  let shim: RootsShimHandle;
  const seen: string[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await shim.call(name, args);
    seen.push(textOf(result), JSON.stringify(result.structuredContent ?? {}));
    return result;
  };

  beforeAll(async () => {
    await home.ok(['add', '--no-test', 'reg', `sqlite:${registryDb}`]);
    for (const dir of [alpha, beta, empty, hanacli]) await home.ok(['trust', dir]);
    shim = await startRootsShim(home.env, { roots: [alpha], args: ['--connection', 'reg'], cwd: empty });
  });
  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  it('starts in the client’s first root and uses the project’s database', async () => {
    expect(await title(shim)).toBe('book of alpha');
    const list = await call('list_connections');
    expect(textOf(list)).toMatch(/project:db\s+\|\s+\*\s+\|\s+sqlite/);
    expect(list.structuredContent).toMatchObject({ active: 'project:db', project: { status: 'ok', root: alpha } });
    expect((list.structuredContent as { connections: { name: string }[] }).connections.map((c) => c.name)).toEqual(['reg', 'project:db']);
    expect(textOf(await call('current_connection'))).toContain(`found in ${join(alpha, 'package.json')}`);
    expect(shim.rootsAsked()).toBe(1);
  });

  it('lets the catalog tools find their way around a project connection too', async () => {
    const tables = await call('list_tables');
    expect(tables.isError, textOf(tables)).toBeFalsy();
    expect(textOf(tables)).toContain('books');
    const described = await call('describe_table', { table: 'books' });
    expect(described.isError, textOf(described)).toBeFalsy();
    expect(textOf(described)).toContain('title');
  });

  it('switches project when the roots change mid-session', async () => {
    await shim.setRoots([beta, alpha]);
    expect(await title(shim)).toBe('book of beta');
    expect((await call('current_connection')).structuredContent).toMatchObject({ active: 'project:database', engine: 'sqlite' });
    await shim.setRoots([alpha]);
    expect(await title(shim)).toBe('book of alpha');
  });

  it('falls back to the configured registry connection when the project has none', async () => {
    await shim.setRoots([empty]);
    expect(await title(shim)).toBe('registry book');
    expect((await call('current_connection')).structuredContent).toMatchObject({ active: 'reg' });
  });

  it('does not read an untrusted project, and tells the agent to ask a person', async () => {
    await shim.setRoots([delta]);
    expect(await title(shim)).toBe('registry book');
    expect(textOf(await call('list_connections'))).toContain(`Ask a person to run \`${home.cli} trust ${delta}\``);
    const detect = await call('detect_project');
    expect(detect.isError).toBe(true);
    expect(textOf(detect)).toMatch(new RegExp(`^FORBIDDEN: .*hanactl(?:\\.js)? trust ${delta}`));
    const use = await call('use_connection', { name: 'project:db' });
    expect(use.isError).toBe(true);
    const { tools } = await shim.client.listTools();
    expect(tools.map((t) => t.name).filter((n) => /trust|allow|import/.test(n))).toEqual([]);

    await home.ok(['trust', delta]); // a person decides
    const again = await call('detect_project');
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ root: delta, primary: 'project:db', active: 'project:db' });
    expect(await title(shim)).toBe('book of delta');
  });

  it('moves the session with detect_project {path}, and explains precedence', async () => {
    const moved = await call('detect_project', { path: join(alpha, 'srv') });
    expect(moved.structuredContent).toMatchObject({ root: alpha, cap: { isCap: true }, active: 'project:db' });
    expect(await title(shim)).toBe('book of alpha');

    const many = await call('detect_project', { path: hanacli });
    expect(many.structuredContent).toMatchObject({
      root: hanacli,
      primary: 'project:my-hdi',
      connections: [{ name: 'project:my-hdi', engine: 'hana', primary: true }],
    });
    const sources = (many.structuredContent as { sources: { source: string; status: string; reason: string }[] }).sources;
    expect(sources.find((s) => s.source === 'default-env.json')?.status).toBe('used');
    expect(sources.find((s) => s.source === '.env')).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/^Shadowed: default-env\.json came first/),
    });
    expect(textOf(many)).toMatch(/Connections \(from .*default-env\.json; first match wins\):\n {2}project:my-hdi \(hana\) \[active\]/);
  });

  it('keeps a registry connection the agent chose across project changes', async () => {
    expect((await call('use_connection', { name: 'reg' })).isError).toBeFalsy();
    await shim.setRoots([beta]);
    expect(await title(shim)).toBe('registry book');
    expect((await call('use_connection', { name: 'project:database' })).isError).toBeFalsy();
    expect(await title(shim)).toBe('book of beta');
  });

  it('shows the session’s project in hanactl status', async () => {
    const status = JSON.parse((await home.ok(['status', '--json'])).stdout);
    expect(status.sessions.map((s: { project?: string }) => s.project)).toContain(beta);
  });

  it('never shows a password: not in tool results, not in the daemon’s files', async () => {
    expect(seen.join('\n')).not.toContain(SECRET);
    expect(shim.stderr()).not.toContain(SECRET);
    const { readFileSync, readdirSync } = await import('node:fs');
    for (const name of readdirSync(join(home.dir, 'logs')))
      expect(readFileSync(join(home.dir, 'logs', name), 'utf8')).not.toContain(SECRET);
  });
});

describe('without MCP roots', () => {
  const home2 = new TestHome({ extraEnv: { HOME: join(base.dir, 'home') } });
  afterAll(() => home2.dispose());

  it('uses --project, else the working folder', async () => {
    await home2.ok(['trust', base.dir]);
    const byFlag = await startRootsShim(home2.env, { offerRoots: false, args: ['--project', beta], cwd: alpha });
    const byCwd = await startRootsShim(home2.env, { offerRoots: false, cwd: join(alpha, 'srv') });
    try {
      expect(await title(byFlag)).toBe('book of beta');
      expect(await title(byCwd)).toBe('book of alpha');
      expect(byCwd.rootsAsked()).toBe(0);
    } finally {
      await byFlag.close();
      await byCwd.close();
    }
  });

  it('uses hana-cli’s HANA_CLI_PROJECT_PATH in place of the working folder, after --project, as hana-cli does', async () => {
    await home2.ok(['trust', base.dir]);
    const env = { ...home2.env, HANA_CLI_PROJECT_PATH: '../beta' }; // relative to the working folder, as hana-cli's chdir
    const byEnv = await startRootsShim(env, { offerRoots: false, cwd: alpha });
    const flagWins = await startRootsShim(env, { offerRoots: false, args: ['--project', hanacli], cwd: alpha });
    const missing = await startRootsShim(
      { ...home2.env, HANA_CLI_PROJECT_PATH: join(base.dir, 'gone') },
      { offerRoots: false, cwd: alpha },
    );
    try {
      expect(await title(byEnv)).toBe('book of beta');
      expect((await flagWins.call('current_connection')).structuredContent).toMatchObject({ active: 'project:my-hdi' });
      expect(await title(missing)).toBe('book of alpha'); // not a folder: hana-cli keeps its working folder too
    } finally {
      await byEnv.close();
      await flagWins.close();
      await missing.close();
    }
  });
});
