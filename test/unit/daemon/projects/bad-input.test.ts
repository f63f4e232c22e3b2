import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliCommand } from '../../../../shared/cli-command.js';
import { capSqliteProject, fixtureRoot, hanaBinding, json, link, writeTree } from '../../../helpers/project-fixtures.js';
import { projectService, SECRET } from './setup.js';

const base = fixtureRoot();
afterAll(() => base.dispose());
let n = 0;
const folder = (tree: Parameters<typeof writeTree>[1]) => writeTree(join(base.dir, `b${++n}`), tree);

/** Detects a trusted project and returns its source reports by label. */
function sources(root: string) {
  const { service } = projectService([root]);
  const result = service.detect({ path: root });
  expect(JSON.stringify(result)).not.toContain(SECRET);
  return { result, by: Object.fromEntries(result.sources.map((s) => [s.source, s])) };
}

describe('bad input: a clear sentence naming the file and the problem, and the chain goes on', () => {
  it('malformed JSON: the line and column, never the text', () => {
    const root = folder({
      ...capSqliteProject('m'),
      'default-env.json': `{"VCAP_SERVICES": {"hana": [{"credentials": {"password": "${SECRET}" }}]`,
    });
    const { result, by } = sources(root);
    expect(by['default-env.json']).toMatchObject({
      status: 'error',
      reason: expect.stringMatching(/^default-env\.json is not valid JSON \(line 1, column \d+\)\.$/),
    });
    expect(result.primary).toBe('project:db');
  });

  it('a binding without credentials, and one of an unknown service', () => {
    const root = folder({
      'default-env.json': json({
        VCAP_SERVICES: { hana: [{ name: 'bare' }], 'redis-cache': [{ name: 'r', credentials: { password: SECRET } }] },
      }),
    });
    const { result, by } = sources(root);
    expect(by['default-env.json']?.status).toBe('skipped');
    expect(by['default-env.json']?.reason).toContain('the hana binding "bare" in default-env.json has no credentials; ignored.');
    expect(by['default-env.json']?.reason).toContain('the redis-cache binding "r" in default-env.json is not a database hanactl serves');
    expect(result.connections).toEqual([]);
  });

  it('a default-env.json that is not an object, and one without VCAP_SERVICES', () => {
    expect(sources(folder({ 'default-env.json': '[1, 2]' })).by['default-env.json']).toMatchObject({
      status: 'error',
      reason: 'default-env.json is not a JSON object.',
    });
    expect(sources(folder({ 'default-env.json': json({ PORT: 4004 }) })).by['default-env.json']).toMatchObject({
      status: 'skipped',
      reason: 'default-env.json has no VCAP_SERVICES.',
    });
  });

  it('a path that does not exist, and a relative one', () => {
    const { service } = projectService([base.dir]);
    expect(() => service.detect({ path: join(base.dir, 'missing', 'deeper') })).toThrow(
      `The folder ${join(base.dir, 'missing', 'deeper')} does not exist.`,
    );
    expect(() => service.detect({ path: 'relative/dir' })).toThrow(/not an absolute path/);
  });

  it('a path outside every trusted folder: FORBIDDEN naming the exact hanactl trust command', () => {
    const root = folder(capSqliteProject('u'));
    const { service } = projectService([]);
    let error: { code?: string; message?: string; details?: { hint?: string } } = {};
    try {
      service.detect({ path: join(root, 'srv') });
    } catch (err) {
      error = err as typeof error;
    }
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain(`Ask a person to run \`${cliCommand()} trust ${root}\``);
    expect(error.details?.hint).toBe(`${cliCommand()} trust ${root}`);
  });

  it('`..` that climbs out of a trusted folder is judged by where it lands', () => {
    const trusted = folder(capSqliteProject('t'));
    const outside = folder(capSqliteProject('o'));
    const { service } = projectService([trusted]);
    expect(() => service.detect({ path: `${trusted}/../${outside.split('/').pop()}` })).toThrow(`${cliCommand()} trust ${outside}`);
    expect(service.detect({ path: `${outside}/../${trusted.split('/').pop()}/srv/..` }).root).toBe(trusted);
  });

  it('a connection file that links outside the trusted folder is not read', () => {
    const secretDir = folder({ 'secret.json': json({ VCAP_SERVICES: { hana: [hanaBinding('stolen', { password: SECRET })] } }) });
    const root = folder({
      ...capSqliteProject('l'),
      'default-env.json': link(join(secretDir, 'secret.json')),
      '.env': link('../' + secretDir.split('/').pop() + '/secret.json'),
    });
    const { by, result } = sources(root);
    expect(by['default-env.json']).toMatchObject({
      status: 'skipped',
      reason: `default-env.json resolves to ${join(secretDir, 'secret.json')}, outside every trusted folder; it was not read.`,
    });
    expect(by['.env']?.status).toBe('skipped');
    expect(result.connections.map((c) => c.name)).toEqual(['project:db']);
  });

  it('a project folder that is a symlink to an untrusted place is judged by its real path', () => {
    const real = folder(capSqliteProject('r'));
    const trusted = folder({ sneaky: link(real) });
    const { service } = projectService([trusted]);
    expect(() => service.detect({ path: join(trusted, 'sneaky') })).toThrow(`${cliCommand()} trust ${real}`);
  });

  it('a SQLite url that climbs out with ../ is refused; a missing file is named', () => {
    const outside = folder({ 'x.sqlite': '' });
    const root = folder({
      'package.json': json({
        cds: { requires: { db: { kind: 'sqlite', credentials: { url: `../${outside.split('/').pop()}/x.sqlite` } } } },
      }),
    });
    expect(sources(root).by['package.json']?.reason).toMatch(
      /The SQLite file of cds\.requires\.db \(sqlite\) resolves to .*x\.sqlite, outside every trusted folder/,
    );
    const missing = folder({ 'package.json': json({ cds: { requires: { db: { kind: 'sqlite', credentials: { url: 'db.sqlite' } } } } }) });
    expect(sources(missing).by['package.json']?.reason).toMatch(/points at .*db\.sqlite, which does not exist yet/);
  });

  it('a symlink loop', () => {
    const root = folder({ 'package.json': json({}), 'default-env.json': link('loop-b'), 'loop-b': link('default-env.json') });
    expect(sources(root).by['default-env.json']).toMatchObject({
      status: 'error',
      reason: expect.stringMatching(/default-env\.json \(.*\) is part of a symlink loop; it was not read\./),
    });
    const { service } = projectService([root]);
    expect(() => service.detect({ path: join(root, 'loop-b') })).toThrow(/symlink loop/);
  });

  it('a FIFO where a connection file should be is not opened for reading', () => {
    const root = folder({ 'package.json': json({}) });
    try {
      execFileSync('mkfifo', [join(root, '.env')]);
    } catch {
      return; // no mkfifo here
    }
    expect(sources(root).by['.env']).toMatchObject({ status: 'error', reason: expect.stringMatching(/is not a regular file/) });
  });

  it('nothing it met broke it: the next call works', () => {
    const root = folder(capSqliteProject('next'));
    expect(sources(root).result.primary).toBe('project:db');
  });
});
