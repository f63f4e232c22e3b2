import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliCommand } from '../../../../shared/cli-command.js';
import { inProcessDaemon, requestJson } from '../../../helpers/in-process-daemon.js';
import { capSqliteProject, fixtureRoot, writeTree } from '../../../helpers/project-fixtures.js';

const base = fixtureRoot();
const daemon = await inProcessDaemon(base.dir, { connectTimeoutMs: 5000, maxPools: 4 });
const app = daemon.app;
const project = writeTree(join(base.dir, 'shop'), capSqliteProject('shop'));

afterAll(async () => {
  await daemon.close();
  base.dispose();
});

/** The parts of answers these tests look at. */
interface Answer {
  readonly error: { code: string; message: string; hint?: string };
  readonly connections: { name: string }[];
  readonly primary?: string;
  readonly [key: string]: unknown;
}

const call = (method: string, path: string, body?: unknown, client = 'hanactl-shim') =>
  requestJson<Answer>(app, method, path, body, client);

describe('the project and trust API', () => {
  it('refuses detection of an untrusted folder with 403 naming hanactl trust', async () => {
    const res = await call('POST', '/v1/projects/detect', { path: project });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', category: 'agent', hint: `${cliCommand()} trust ${project}` });
  });

  it('lets only the CLI change trust: the shim’s header is refused', async () => {
    for (const [method, path] of [
      ['POST', '/v1/trust'],
      ['POST', '/v1/trust/remove'],
      ['POST', '/v1/projects/import'],
      ['GET', '/v1/trust'],
    ] as const) {
      const res = await call(method, path, method === 'GET' ? undefined : { path: project });
      expect(res.status, path).toBe(403);
      expect(res.body.error.message).toMatch(/Only a person can .* with the hanactl command line; no tool can\./);
    }
    expect((await call('GET', '/v1/trust', undefined, 'hanactl-cli')).body).toEqual({ trusted: [] });
    const ok = await call('POST', '/v1/trust', { path: project }, 'hanactl-cli');
    expect(ok).toEqual({ status: 200, body: { path: project, changed: true } });
  });

  it('lists project connections beside the registry’s and resolves them for queries', async () => {
    await call('POST', '/v1/connections', { name: 'mem', url: 'sqlite::memory:' }, 'hanactl-cli');
    const listed = await call('GET', `/v1/connections?project=${encodeURIComponent(join(project, 'srv'))}`);
    expect(listed.body.connections.map((c) => c.name)).toEqual(['mem', 'project:db']);
    expect(listed.body.project).toMatchObject({ status: 'ok', root: project, primary: 'project:db' });
    expect((await call('GET', '/v1/connections')).body).toEqual({ connections: [expect.objectContaining({ name: 'mem' })] });
    const info = await call('GET', `/v1/connections/project:db?project=${encodeURIComponent(project)}`);
    expect(info.body).toMatchObject({ name: 'project:db', engine: 'sqlite', allowWrite: false, source: join(project, 'package.json') });
    const rows = await call('POST', '/v1/query', { connection: 'project:db', project, sql: 'SELECT title FROM books' });
    expect(rows.body).toMatchObject({ rows: [{ title: 'book of shop' }] });
    const noProject = await call('POST', '/v1/query', { connection: 'project:db', sql: 'SELECT 1' });
    expect(noProject.status).toBe(404);
  });

  it('imports a project connection into the registry (CLI only), then it is an ordinary one', async () => {
    const res = await call('POST', '/v1/projects/import', { path: project, as: 'shop-db' }, 'hanactl-cli');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'shop-db', engine: 'sqlite', url: `sqlite:${join(project, 'db.sqlite')}`, allowWrite: false });
    const rows = await call('POST', '/v1/query', { connection: 'shop-db', sql: 'SELECT count(*) AS n FROM books' });
    expect(rows.body).toMatchObject({ rows: [{ n: 1 }] });
    const clash = await call('POST', '/v1/projects/import', { path: project, as: 'shop-db' }, 'hanactl-cli');
    expect(clash.status).toBe(409);
  });

  it('validates bodies and keeps serving', async () => {
    expect((await call('POST', '/v1/projects/detect', { path: '' })).status).toBe(400);
    expect((await call('POST', '/v1/projects/detect', { path: project, extra: 1 })).status).toBe(400);
    expect((await call('POST', '/v1/projects/detect', { path: 'relative' })).status).toBe(400);
    expect((await call('POST', '/v1/projects/detect', { path: join(project, 'nope') })).status).toBe(404);
    expect((await call('POST', '/v1/projects/detect', { path: project })).body.primary).toBe('project:db');
    expect(daemon.errors).toEqual([]);
  });
});
