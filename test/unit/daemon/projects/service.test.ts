import { randomBytes } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TrustStore } from '../../../../daemon/projects/trust-store.js';
import { Registry } from '../../../../daemon/registry/registry.js';
import { cliCommand } from '../../../../shared/cli-command.js';
import { capSqliteProject, fixtureRoot, hanaBinding, json, link, writeTree } from '../../../helpers/project-fixtures.js';
import { projectService, SECRET } from './setup.js';

const base = fixtureRoot();
afterAll(() => base.dispose());

describe('finding the project root', () => {
  const outer = writeTree(join(base.dir, 'outer'), {
    ...capSqliteProject('outer'),
    app: { 'index.html': '' },
    packages: { inner: capSqliteProject('inner'), plain: { 'notes.txt': 'no markers here' } },
  });

  it('walks up to the nearest marker, so nested projects each find their own', () => {
    const { service } = projectService([outer]);
    expect(service.detect({ path: join(outer, 'packages/inner/srv') }).root).toBe(join(outer, 'packages/inner'));
    expect(service.detect({ path: join(outer, 'srv') }).root).toBe(outer);
    expect(service.detect({ path: join(outer, 'packages/plain') }).root).toBe(outer);
    expect(service.detect({ path: join(outer, 'package.json') }).root).toBe(outer);
  });

  it('recognises a CAP project by package.json’s cds and its folders', () => {
    const { service } = projectService([outer]);
    const result = service.detect({ path: outer });
    expect(result.markers).toEqual(['package.json']);
    expect(result.cap).toEqual({ isCap: true, signals: ['db/', 'srv/', 'app/', 'cds in package.json'] });
    expect(result.connections).toEqual([{ name: 'project:db', engine: 'sqlite', source: join(outer, 'package.json'), primary: true }]);
  });

  it('never walks above the trusted folder holding the path', () => {
    const { service } = projectService([join(outer, 'packages/plain')]);
    const result = service.detect({ path: join(outer, 'packages/plain') });
    expect(result.root).toBe(join(outer, 'packages/plain'));
    expect(result.markers).toEqual([]);
    expect(result.connections).toEqual([]);
  });
});

describe('project connections', () => {
  const root = writeTree(join(base.dir, 'hdi'), {
    'package.json': json({ name: 'hdi' }),
    'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('my-hdi', { password: SECRET })] } }),
  });

  it('resolve with their secret for the pools, which never serialises', () => {
    const { service } = projectService([root]);
    const record = service.resolve('project:my-hdi', { project: root });
    expect(record).toMatchObject({ name: 'project:my-hdi', allowWrite: false, context: [], target: { engine: 'hana' } });
    expect(record.password).toBe(SECRET);
    expect(JSON.stringify(record)).not.toContain(SECRET);
    expect({ ...record }).not.toHaveProperty('password');
    expect(JSON.stringify(service.info('project:my-hdi', { project: root }))).not.toContain(SECRET);
  });

  it('hand back the previous record when the file changes its password or target, so its pool can close', () => {
    const dir = writeTree(join(base.dir, 'rotating'), {
      'package.json': json({ name: 'rotating' }),
      'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('rot', { password: 'first-password' })] } }),
    });
    const replaced: { password?: string; host?: string }[] = [];
    const { service } = projectService([dir], undefined, (previous) =>
      replaced.push({ password: previous.password, host: (previous.target as { host?: string }).host }),
    );
    const rewrite = (credentials: Record<string, unknown>, stamp: number) => {
      const file = join(dir, 'default-env.json');
      writeFileSync(file, JSON.stringify({ VCAP_SERVICES: { hana: [hanaBinding('rot', credentials)] } }));
      utimesSync(file, stamp, stamp); // a new modification stamp, however fast the test runs
    };
    expect(service.resolve('project:rot', { project: dir }).password).toBe('first-password');
    expect(service.resolve('project:rot', { project: dir }).password).toBe('first-password');
    expect(replaced).toEqual([]); // read again, unchanged: nothing to close

    rewrite({ password: 'second-password' }, Date.now() / 1000 + 10);
    expect(service.resolve('project:rot', { project: dir }).password).toBe('second-password');
    expect(replaced).toEqual([{ password: 'first-password', host: 'abc123.hana.prod-eu10.hanacloud.ondemand.com' }]);

    rewrite({ password: 'second-password', host: 'other.example.com' }, Date.now() / 1000 + 20);
    service.listing({ project: dir });
    expect(replaced).toHaveLength(2);
    expect(replaced[1]).toEqual({ password: 'second-password', host: 'abc123.hana.prod-eu10.hanacloud.ondemand.com' });
  });

  it('say which names exist when asked for one that does not, and need a project', () => {
    const { service } = projectService([root]);
    expect(() => service.resolve('project:nope', { project: root })).toThrow(
      `The project ${root} has no connection named "project:nope". It has: project:my-hdi.`,
    );
    expect(() => service.resolve('project:my-hdi', {})).toThrow(
      /names no project folder; .*hanactl(?:\.js)? import <dir> --connection project:my-hdi/,
    );
  });

  it('list with a status instead of failing when the folder is untrusted or missing', () => {
    const { service } = projectService([]);
    expect(service.listing({ project: root })).toEqual({
      connections: [],
      project: { path: root, status: 'untrusted', message: expect.stringContaining(`${cliCommand()} trust ${root}`) },
    });
    expect(service.listing({ project: join(root, 'gone') }).project).toMatchObject({
      status: 'error',
      message: expect.stringMatching(/does not exist/),
    });
  });

  it('keep a session’s own VCAP_SERVICES for its later calls', () => {
    const bare = writeTree(join(base.dir, 'bare'), { 'package.json': json({}) });
    const { service } = projectService([bare]);
    const vcapServices = JSON.stringify({ hana: [hanaBinding('env-hdi', { password: SECRET })] });
    expect(service.detect({ path: bare, session: 's1', vcapServices }).primary).toBe('project:env-hdi');
    expect(service.listing({ project: bare, session: 's1' }).connections.map((c) => c.name)).toEqual(['project:env-hdi']);
    expect(service.listing({ project: bare, session: 's2' }).connections).toEqual([]);
    expect(service.resolve('project:env-hdi', { project: bare, session: 's1' }).password).toBe(SECRET);
  });
});

describe('trusted folders in the encrypted registry', () => {
  it('are stored by real path, survive a restart, and refuse the filesystem root', () => {
    const path = join(base.dir, 'registry.db');
    const key = randomBytes(32);
    const project = writeTree(join(base.dir, 'trusted-one'), { 'package.json': json({}) });
    let registry = Registry.open(path, key);
    const trust = new TrustStore(registry);
    const links = writeTree(join(base.dir, 'links'), { 'to-project': link(project) });
    expect(trust.trust(join(links, 'to-project'))).toEqual({ path: project, changed: true });
    expect(trust.trust(project)).toEqual({ path: project, changed: false });
    expect(() => trust.trust('/')).toThrow(/would trust every folder/);
    expect(() => trust.trust('relative')).toThrow(/not an absolute path/);
    expect(trust.containing(join(project, 'a/b'))).toBe(project);
    expect(trust.containing(`${project}-sibling`)).toBeUndefined();
    registry.close();
    registry = Registry.open(path, key);
    expect(new TrustStore(registry).list().map((f) => f.path)).toEqual([project]);
    expect(new TrustStore(registry).untrust(project)).toEqual({ path: project, changed: true });
    expect(new TrustStore(registry).list()).toEqual([]);
    registry.close();
  });
});
