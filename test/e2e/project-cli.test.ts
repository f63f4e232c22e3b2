import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../shared/daemon-client.js';
import { resolvePaths } from '../../shared/paths.js';
import { trustFolder } from '../../shared/project-client.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { capSqliteProject, fixtureRoot, hanaBinding, json, link, writeTree } from '../helpers/project-fixtures.js';

const SECRET = 'cli-planted-secret-0b7e';
const base = fixtureRoot();
const home = new TestHome({ extraEnv: { HOME: join(base.dir, 'home') } });
const cap = writeTree(join(base.dir, 'cap'), {
  ...capSqliteProject('cap'),
  'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('cap-hdi', { password: SECRET })] } }),
});
/** A project after `cds bind`: its .cdsrc-private.json holds only a binding reference. */
const bound = writeTree(join(base.dir, 'bound'), {
  ...capSqliteProject('bound'),
  '.cdsrc-private.json': json({
    requires: { '[hybrid]': { db: { kind: 'hana', binding: { type: 'cf', instance: 'cap-hana', key: 'cap-key' } } } },
  }),
  'default-env.json': json({ VCAP_SERVICES: { hana: [hanaBinding('cap-hdi', { password: SECRET })] } }),
});
writeTree(join(base.dir, 'links'), { 'to-cap': link(cap) });
/** A team's shared hana-cli connection file one folder above a CAP project. */
const team = writeTree(join(base.dir, 'team'), {
  'team-hana.json': json({ VCAP_SERVICES: { hana: [hanaBinding('team-hdi', { password: SECRET })] } }),
  app: capSqliteProject('app'),
});

afterAll(async () => {
  await home.dispose();
  base.dispose();
});

describe('hanactl trust, explain-project and import', () => {
  it('trusts by real path, lists and untrusts, with --json', async () => {
    expect((await home.ok(['trusted'])).stdout).toMatch(/No folder is trusted yet/);
    const added = JSON.parse((await home.ok(['trust', join(base.dir, 'links', 'to-cap'), '--json'])).stdout);
    expect(added).toEqual({ path: cap, changed: true });
    expect((await home.ok(['trust', cap])).stdout).toMatch(/was trusted already/);
    expect(JSON.parse((await home.ok(['trusted', '--json'])).stdout)).toEqual({ trusted: [{ path: cap, createdAt: expect.any(String) }] });
    expect((await home.ok(['untrust', cap])).stdout).toContain(`${cap} is no longer trusted.`);
    const refused = await home.run(['explain-project', cap]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${home.cli} trust ${cap}`);
    expect((await home.run(['trust', join(base.dir, 'nope')])).stderr).toMatch(/does not exist/);
  });

  it('refuses a trust request from the shim’s client, whatever path it names', async () => {
    const shimClient = new DaemonClient({ socketPath: resolvePaths(home.env).socket, clientName: 'hanactl-shim' });
    try {
      await expect(trustFolder(shimClient, cap)).rejects.toMatchObject({
        code: 'FORBIDDEN',
        message: expect.stringMatching(/Only a person can trust a folder/),
      });
    } finally {
      shimClient.close();
    }
    expect(JSON.parse((await home.ok(['trusted', '--json'])).stdout).trusted).toEqual([]);
  });

  it('explains each source tried, in order, and why it was used or skipped', async () => {
    await home.ok(['trust', cap]);
    const text = (await home.ok(['explain-project', join(cap, 'srv')])).stdout;
    expect(text).toContain(`Project ${cap} (CAP: db/, srv/, cds in package.json)`);
    expect(text).toMatch(/ 2\. \.cdsrc-private\.json: absent/);
    expect(text).toMatch(/ 5\. package\.json: used/);
    expect(text).toMatch(/ 6\. default-env\.json: skipped .*\n {4}Shadowed: package\.json came first/);
    expect(text).toContain('Connections: project:db (sqlite) [first]');
    const explained = JSON.parse((await home.ok(['explain-project', cap, '--json'])).stdout);
    expect(explained.sources.map((s: { source: string; status: string }) => `${s.source}=${s.status}`)).toEqual([
      'HANA_CLI_* (environment)=absent',
      '.cdsrc-private.json=absent',
      'HANA_CLI_CONN_FILE (environment)=absent',
      '.cdsrc.json=absent',
      'package.json=used',
      'default-env.json=skipped',
      'connection file=absent',
      '~/.hana-cli/default.json=absent',
      '.env=absent',
      'VCAP_SERVICES=absent',
    ]);
    expect(text + JSON.stringify(explained)).not.toContain(SECRET);
  });

  it('stops at a .cdsrc-private.json that holds only a binding reference, naming it and the cds bind command', async () => {
    await home.ok(['trust', bound]);
    const text = (await home.ok(['explain-project', bound])).stdout;
    expect(text).toMatch(
      / 2\. \.cdsrc-private\.json: error .*\n {4}.*only a cloud binding reference.*"cap-hana".*cds bind --exec --profile hybrid/,
    );
    expect(text).toMatch(/ 5\. package\.json: skipped\n {4}Not read: \.cdsrc-private\.json stops the chain/);
    expect(text).not.toContain(SECRET);
  });

  it('honours HANA_CLI_HOST from the environment before every file, and never its password', async () => {
    const planted = 'hana-cli-env-secret-5d1e';
    const result = await home.run(['explain-project', cap], {
      env: { HANA_CLI_HOST: 'db.example.com', HANA_CLI_USER: 'DEV', HANA_CLI_PASSWORD: planted },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/ 1\. HANA_CLI_\* \(environment\): used/);
    expect(result.stdout).toContain('HANA_CLI_PASSWORD is ignored');
    expect(result.stdout).toContain(`${home.cli} add <name> hana://DEV@db.example.com:30013/SYSTEMDB`);
    expect(result.stdout + result.stderr).not.toContain(planted);
  });

  it('honours HANA_CLI_CONN_FILE after .cdsrc-private.json and before CAP and default-env.json, looking in parent folders', async () => {
    await home.ok(['trust', team]);
    const app = join(team, 'app');
    const result = await home.run(['explain-project', app, '--json'], { env: { HANA_CLI_CONN_FILE: 'team-hana.json' } });
    expect(result.code, result.stderr).toBe(0);
    const explained = JSON.parse(result.stdout);
    expect(explained.sources.slice(0, 4).map((s: { source: string; status: string }) => `${s.source}=${s.status}`)).toEqual([
      'HANA_CLI_* (environment)=absent',
      '.cdsrc-private.json=absent',
      'HANA_CLI_CONN_FILE (environment)=used',
      '.cdsrc.json=absent',
    ]);
    expect(explained.sources[2].file).toBe(join(team, 'team-hana.json'));
    expect(explained.connections).toEqual([expect.objectContaining({ name: 'project:team-hdi', engine: 'hana', primary: true })]);
    const missing = await home.ok(['explain-project', app], { env: { HANA_CLI_CONN_FILE: 'nope.json' } });
    expect(missing.stdout).toMatch(
      / 3\. HANA_CLI_CONN_FILE \(environment\): absent\n {4}HANA_CLI_CONN_FILE names nope\.json, which does not exist/,
    );
    expect(missing.stdout).toContain('Connections: project:db (sqlite) [first]');
    expect(result.stdout + missing.stdout).not.toContain(SECRET);
  });

  it('imports a project connection into the registry, by default and by name', async () => {
    const imported = JSON.parse((await home.ok(['import', cap, '--json'])).stdout);
    expect(imported).toMatchObject({ name: 'cap-db', engine: 'sqlite', url: `sqlite:${join(cap, 'db.sqlite')}`, allowWrite: false });
    const named = await home.ok(['import', cap, '--connection', 'db', '--as', 'catalog']);
    expect(named.stdout).toMatch(/Imported "catalog" \(sqlite, read-only\)/);
    const list = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(list.connections.map((c: { name: string }) => c.name)).toEqual(['cap-db', 'catalog']);
    const missing = await home.run(['import', cap, '--connection', 'project:nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('has no connection named "project:nope". It has: project:db.');
  });
});
