import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { fixtureRoot, json, postgresBinding, writeTree } from '../helpers/project-fixtures.js';
import { type RootsShimHandle, startRootsShim } from '../helpers/roots-client.js';

const available = await serverAvailable('postgres');
const table = `hanactl_project_${process.pid}_${Date.now()}`;

describe.skipIf(!available)('a project whose default-env.json binds the test PostgreSQL', () => {
  const base = fixtureRoot();
  const home = new TestHome({ extraEnv: { HOME: join(base.dir, 'home') } });
  const project = writeTree(join(base.dir, 'orders'), {
    'package.json': json({ name: 'orders' }),
    'default-env.json': json({
      VCAP_SERVICES: { 'postgresql-db': [postgresBinding('orders-db', PG_URL)], redis: [{ name: 'cache', credentials: {} }] },
    }),
  });
  let admin: pg.Client;
  let shim: RootsShimHandle;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${table} (id int, item text)`);
    await admin.query(`INSERT INTO ${table} VALUES (1, 'widget')`);
    await home.ok(['trust', project]);
    shim = await startRootsShim(home.env, { roots: [project] });
  });
  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await admin?.query(`DROP TABLE IF EXISTS ${table}`);
    await admin?.end();
    base.dispose();
  });

  it('queries PostgreSQL through the VCAP postgresql binding, read-only', async () => {
    const rows = await shim.call('run_query', { sql: `SELECT item FROM ${table}` });
    expect(rows.isError, textOf(rows)).toBeFalsy();
    expect(rows.structuredContent).toMatchObject({ rows: [{ item: 'widget' }] });
    const write = await shim.call('run_query', { sql: `DELETE FROM ${table}` });
    expect(write.isError).toBe(true);
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(1);
  });

  it('explains the binding it used and the one it ignored', async () => {
    const detect = await shim.call('detect_project');
    expect(detect.structuredContent).toMatchObject({
      primary: 'project:orders-db',
      connections: [{ name: 'project:orders-db', engine: 'postgres' }],
    });
    expect(textOf(detect)).toContain('the redis binding "cache" in default-env.json is not a database hanactl serves');
  });

  it('closes the old pool when the file’s credentials change, instead of keeping it warm', async () => {
    const projectPools = async () =>
      (JSON.parse((await home.ok(['pools', '--json'])).stdout) as { pools: { connections: string[] }[] }).pools.filter((p) =>
        p.connections.includes('project:orders-db'),
      );
    expect(await projectPools()).toHaveLength(1);
    const file = join(project, 'default-env.json');
    writeFileSync(file, JSON.stringify({ VCAP_SERVICES: { 'postgresql-db': [postgresBinding('orders-db', PG_URL, 'rotated-password')] } }));
    const later = Date.now() / 1000 + 5;
    utimesSync(file, later, later);
    const rows = await shim.call('run_query', { sql: `SELECT item FROM ${table}` });
    expect(rows.isError, textOf(rows)).toBeFalsy();
    expect(await projectPools()).toHaveLength(1);
  });

  it('imports it into the registry with hanactl import, where it works without the project', async () => {
    const imported = JSON.parse((await home.ok(['import', project, '--as', 'orders', '--json'])).stdout);
    expect(imported).toMatchObject({ name: 'orders', engine: 'postgres', allowWrite: false });
    expect((await home.ok(['test', 'orders'])).stdout).toMatch(/answers in/);
  });
});
