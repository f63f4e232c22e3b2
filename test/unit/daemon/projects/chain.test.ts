import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSources } from '../../../../daemon/projects/project-resolver.js';
import type { SourceContext } from '../../../../daemon/projects/sources.js';
import { cliCommand } from '../../../../shared/cli-command.js';
import { capSqliteProject, fixtureRoot, hanaBinding, json, postgresBinding, writeTree } from '../../../helpers/project-fixtures.js';
import { projectService, SECRET } from './setup.js';

const base = fixtureRoot();
afterAll(() => base.dispose());
let n = 0;
const folder = (tree: Parameters<typeof writeTree>[1]) => writeTree(join(base.dir, `p${++n}`), tree);

function chain(root: string, extra: Partial<SourceContext> = {}, trusted: readonly string[] = [root]) {
  const { files } = projectService(trusted);
  return resolveSources({ root, files, hanaCliHome: join(base.dir, 'no-home'), ...extra });
}
const status = (r: ReturnType<typeof chain>) => Object.fromEntries(r.sources.map((s) => [s.source, s.status]));

describe('the connection chain, source by source', () => {
  it('uses CAP’s cds.requires.db in package.json: a SQLite project needs no server', () => {
    const root = folder(capSqliteProject('a'));
    const r = chain(root);
    expect(r.used).toMatchObject({ label: 'package.json', preferred: 'db' });
    expect(r.used?.candidates[0]?.target).toMatchObject({ engine: 'sqlite', path: join(root, 'db.sqlite') });
    expect(status(r)).toMatchObject({
      '.cdsrc-private.json': 'absent',
      '.cdsrc.json': 'absent',
      'package.json': 'used',
      'default-env.json': 'absent',
      '.env': 'absent',
    });
  });

  it('follows hana-cli’s order: first match wins, and every later source says what it would have given', () => {
    const root = folder({
      ...capSqliteProject('b'),
      '.cdsrc-private.json': json({
        requires: { db: { kind: 'postgres', credentials: { host: 'pg.local', user: 'u', password: SECRET, database: 'd' } } },
      }),
      'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('hdi', { password: SECRET })] } }),
      '.env': `DATABASE_URL=sqlite:./other.db\nHANA_PASSWORD=${SECRET}\n`,
    });
    const r = chain(root, { vcapServices: JSON.stringify({ hana: [hanaBinding('from-env')] }) });
    expect(r.used?.label).toBe('.cdsrc-private.json');
    expect(status(r)).toEqual({
      'HANA_CLI_* (environment)': 'absent',
      '.cdsrc-private.json': 'used',
      'HANA_CLI_CONN_FILE (environment)': 'absent',
      '.cdsrc.json': 'absent',
      'package.json': 'skipped',
      'default-env.json': 'skipped',
      'connection file': 'absent',
      '~/.hana-cli/default.json': 'absent',
      '.env': 'skipped',
      VCAP_SERVICES: 'skipped',
    });
    const pkg = r.sources.find((s) => s.source === 'package.json');
    expect(pkg?.reason).toMatch(
      /^Shadowed: \.cdsrc-private\.json came first and is used \(first match wins\); this source would yield project:db \(sqlite\)/,
    );
    expect(r.sources.find((s) => s.source === 'default-env.json')?.connections).toEqual([{ name: 'project:hdi', engine: 'hana' }]);
    expect(JSON.stringify(r.sources)).not.toContain(SECRET);
  });

  it('stops at a .cdsrc-private.json that holds only a cloud binding (as cds bind writes it), as hana-cli does', () => {
    // The file exactly as `cds bind --to my-hana` writes it.
    const root = folder({
      ...capSqliteProject('c'),
      '.cdsrc-private.json': json({
        requires: {
          '[hybrid]': {
            db: {
              binding: {
                type: 'cf',
                apiEndpoint: 'https://api.cf.eu10.hana.ondemand.com',
                org: 'o',
                space: 's',
                instance: 'my-hana',
                key: 'my-hana-key',
                resolved: false,
              },
              kind: 'hana',
              vcap: { name: 'db' },
            },
          },
        },
      }),
      'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('elsewhere', { password: SECRET })] } }),
    });
    const r = chain(root);
    const priv = r.sources.find((s) => s.source === '.cdsrc-private.json');
    expect(priv).toMatchObject({ source: '.cdsrc-private.json', status: 'error' });
    expect(priv?.reason).toMatch(/only a cloud binding reference.*"my-hana" with key "my-hana-key".*cds bind --exec --profile hybrid/);
    expect(priv?.reason).toContain('hana-cli stops here too');
    expect(r.used).toBeUndefined();
    expect(status(r)).toMatchObject({ 'package.json': 'skipped', 'default-env.json': 'skipped' });
    expect(r.sources.find((s) => s.source === 'default-env.json')?.reason).toBe(
      'Not read: .cdsrc-private.json stops the chain (as in hana-cli).',
    );
    expect(JSON.stringify(r.sources)).not.toContain(SECRET);
  });

  it('uses the caller’s VCAP_SERVICES for that binding when cds bind --exec provides it', () => {
    const root = folder({
      '.cdsrc-private.json': json({
        requires: { '[hybrid]': { db: { kind: 'hana', binding: { type: 'cf', instance: 'my-hana', key: 'my-hana-key' } } } },
      }),
    });
    const r = chain(root, { vcapServices: JSON.stringify({ hana: [hanaBinding('my-hana', { password: SECRET })] }) });
    expect(r.used).toMatchObject({ label: '.cdsrc-private.json', preferred: 'my-hana' });
    expect(r.sources.find((s) => s.source === '.cdsrc-private.json')?.reason).toContain('cds bind --exec');
  });

  it('lets HANA_CLI_HOST in the caller’s environment beat every file, as hana-cli does, without a password', () => {
    // A hana-cli project: default-env.json as `hana-cli connect` writes it, plus a .env.
    const root = folder({
      'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('from-file', { password: SECRET })] } }),
      '.env': `HANA_HOST=other\nHANA_USER=u\nHANA_PASSWORD=${SECRET}\n`,
    });
    const r = chain(root, { hanaCli: { host: 'db.example.com', user: 'DEV', schema: 'APP', passwordSet: true } });
    expect(r.used?.label).toBe('HANA_CLI_* (environment)');
    const [c] = r.used?.candidates ?? [];
    expect(c?.target).toEqual({
      engine: 'hana',
      scheme: 'hana',
      host: 'db.example.com',
      port: 30013,
      user: 'DEV',
      database: 'SYSTEMDB',
      options: { currentSchema: 'APP' },
    });
    expect(c?.password).toBeUndefined();
    const used = r.sources[0];
    expect(used?.reason).toContain('HANA_CLI_PASSWORD is ignored');
    expect(used?.reason).toContain(`${cliCommand()} add <name> hana://DEV@db.example.com:30013/SYSTEMDB`);
    expect(status(r)['default-env.json']).toBe('skipped');
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('gives a HANA Cloud HANA_CLI_HOST without a port 443 and TLS, and keeps HANA_CLI_PORT and _DATABASE as given', () => {
    const root = folder({ 'package.json': json({ name: 'x' }) });
    const cloud = chain(root, { hanaCli: { host: 'x1.hana.prod-eu10.hanacloud.ondemand.com', user: 'DBADMIN' } }).used?.candidates[0];
    expect(cloud?.target).toMatchObject({ port: 443, options: { encrypt: 'true' } });
    expect(cloud?.target.database).toBeUndefined();
    const given = chain(root, { hanaCli: { host: 'h', port: '30041', database: 'H00' } }).used?.candidates[0];
    expect(given?.target).toMatchObject({ port: 30041, database: 'H00' });
    expect(chain(root, { hanaCli: { host: 'h', port: 'x' } }).sources[0]).toMatchObject({ status: 'error' });
  });

  it('reads the file HANA_CLI_CONN_FILE names right after .cdsrc-private.json, as hana-cli does', () => {
    const conn = json({ VCAP_SERVICES: { hana: [hanaBinding('from-conn-file', { password: SECRET })] } });
    const root = folder({
      ...capSqliteProject('c'),
      'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('from-default-env')] } }),
      conns: { 'dev.json': conn },
    });
    const r = chain(root, { hanaCli: { connFile: 'conns/dev.json' } });
    expect(r.used).toMatchObject({
      label: 'HANA_CLI_CONN_FILE (environment)',
      preferred: 'from-conn-file',
      file: join(root, 'conns', 'dev.json'),
    });
    expect(status(r)).toMatchObject({ 'HANA_CLI_* (environment)': 'absent', 'package.json': 'skipped', 'default-env.json': 'skipped' });
    // .cdsrc-private.json still comes first, and HANA_CLI_HOST before both.
    const privateFirst = folder({
      '.cdsrc-private.json': json({ requires: { db: { kind: 'postgres', credentials: { host: 'pg.local', user: 'u', database: 'd' } } } }),
      'dev.json': conn,
    });
    expect(chain(privateFirst, { hanaCli: { connFile: 'dev.json' } }).used?.label).toBe('.cdsrc-private.json');
    expect(chain(privateFirst, { hanaCli: { host: 'h', connFile: 'dev.json' } }).used?.label).toBe('HANA_CLI_* (environment)');
    expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('looks for HANA_CLI_CONN_FILE in the project and up to four folders above it, first found wins, within trust', () => {
    const top = folder({
      'team.json': json({ VCAP_SERVICES: { hana: [hanaBinding('team')] } }),
      a: { b: { c: { d: { e: { 'package.json': json({}) } } } } },
    });
    const depth4 = join(top, 'a', 'b', 'c', 'd');
    expect(chain(depth4, { hanaCli: { connFile: 'team.json' } }, [top]).used).toMatchObject({
      preferred: 'team',
      file: join(top, 'team.json'),
    });
    const depth5 = join(top, 'a', 'b', 'c', 'd', 'e');
    const tooDeep = chain(depth5, { hanaCli: { connFile: 'team.json' } }, [top]);
    expect(tooDeep.used).toBeUndefined();
    expect(tooDeep.sources.find((s) => s.source === 'HANA_CLI_CONN_FILE (environment)')).toMatchObject({
      status: 'absent',
      reason: expect.stringContaining('HANA_CLI_CONN_FILE names team.json, which does not exist'),
    });
    const untrusted = chain(depth4, { hanaCli: { connFile: 'team.json' } }, [depth4]);
    expect(untrusted.sources.find((s) => s.source === 'HANA_CLI_CONN_FILE (environment)')).toMatchObject({
      status: 'skipped',
      reason: expect.stringContaining(`${cliCommand()} trust ${top}`),
    });
    expect(chain(depth5, { hanaCli: { connFile: join(top, 'team.json') } }, [top]).used?.preferred).toBe('team');
  });

  it('reads a hana-cli project: default-env.json before .env', () => {
    const root = folder({
      'package.json': json({ name: 'plain' }),
      'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('one'), hanaBinding('two')] }, TARGET_CONTAINER: 'two' }),
      '.env': 'HANA_HOST=h\nHANA_USER=u\n',
    });
    const r = chain(root);
    expect(r.used).toMatchObject({ label: 'default-env.json', preferred: 'two' });
    expect(r.used?.candidates.map((c) => c.name)).toEqual(['one', 'two']);
    expect(status(r)['.env']).toBe('skipped');
    expect(r.sources.find((s) => s.source === 'package.json')?.reason).toBe('package.json has no cds section.');
  });

  it('finds a named connection file in the project, then in ~/.hana-cli', () => {
    const home = writeTree(join(base.dir, 'home-a', '.hana-cli'), {
      'prod.json': json({ VCAP_SERVICES: { hana: [hanaBinding('prod')] } }),
    });
    const root = folder({ 'package.json': json({}), 'conn.json': json({ VCAP_SERVICES: { hana: [hanaBinding('local')] } }) });
    expect(chain(root, { connFile: 'conn.json' }).used).toMatchObject({ label: 'connection file', preferred: 'local' });
    expect(chain(root, { connFile: 'prod.json', hanaCliHome: home }, [root, home]).used).toMatchObject({
      label: 'connection file',
      preferred: 'prod',
    });
    const missing = chain(root, { connFile: 'nope.json' });
    expect(missing.sources.find((s) => s.source === 'connection file')).toMatchObject({
      status: 'absent',
      reason: expect.stringMatching(/nope\.json does not exist/),
    });
  });

  it('reads ~/.hana-cli/default.json only when a person trusted that folder', () => {
    const home = writeTree(join(base.dir, 'home-b', '.hana-cli'), {
      'default.json': json({ VCAP_SERVICES: { hana: [hanaBinding('central', { password: SECRET })] } }),
    });
    const root = folder({ 'package.json': json({}) });
    const untrusted = chain(root, { hanaCliHome: home });
    const entry = untrusted.sources.find((s) => s.source === '~/.hana-cli/default.json');
    expect(entry).toMatchObject({ status: 'skipped' });
    expect(entry?.reason).toContain(`${cliCommand()} trust ${home}`);
    expect(untrusted.used).toBeUndefined();
    expect(chain(root, { hanaCliHome: home }, [root, home]).used?.label).toBe('~/.hana-cli/default.json');
  });

  it('uses the caller’s VCAP_SERVICES last', () => {
    const root = folder({ 'package.json': json({}) });
    const r = chain(root, { vcapServices: JSON.stringify({ postgresql: [postgresBinding('pg', 'postgres://u@h:5432/d')] }) });
    expect(r.used).toMatchObject({ label: 'VCAP_SERVICES', preferred: 'pg' });
  });

  it('re-reads a file when it changes, and answers from the cache while it does not', () => {
    const root = folder({ '.env': 'DATABASE_URL=sqlite:./a.db\n', 'a.db': '', 'b.db': '' });
    const { files } = projectService([root]);
    const ctx = { root, files, hanaCliHome: '/nonexistent' };
    expect(resolveSources(ctx).used?.candidates[0]?.target.path).toBe(join(root, 'a.db'));
    const before = files.counts;
    resolveSources(ctx);
    expect(files.counts.reads).toBe(before.reads);
    expect(files.counts.hits).toBeGreaterThan(before.hits);
    writeFileSync(join(root, '.env'), 'DATABASE_URL=sqlite:./b.db\n');
    utimesSync(join(root, '.env'), new Date(), new Date(Date.now() + 5000));
    expect(resolveSources(ctx).used?.candidates[0]?.target.path).toBe(join(root, 'b.db'));
  });
});
