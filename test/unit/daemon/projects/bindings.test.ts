import { describe, expect, it } from 'vitest';
import { buildHanaConnectOptions } from '../../../../daemon/engines/hana/connect-options.js';
import { capDbEntries, engineOfKind } from '../../../../daemon/projects/cap-config.js';
import { connectionsFromCap } from '../../../../daemon/projects/cap-source.js';
import { hanaTarget } from '../../../../daemon/projects/hana-binding.js';
import { SourceError } from '../../../../daemon/projects/source-error.js';
import { connectionsFromVcap } from '../../../../daemon/projects/vcap.js';
import { hanaBinding, postgresBinding } from '../../../helpers/project-fixtures.js';
import { SECRET } from './setup.js';

const settings = { connectTimeoutMs: 5000 };

describe('VCAP_SERVICES bindings', () => {
  it('maps a HANA Cloud HDI binding to hana:// with the connect options the driver gets', () => {
    const found = connectionsFromVcap(
      { hana: [hanaBinding('my-hdi', { password: SECRET, databaseName: 'H00' })] },
      'default-env.json',
      '/p',
    );
    expect(found.preferred).toBe('my-hdi');
    const [c] = found.candidates;
    expect(c?.target).toMatchObject({
      engine: 'hana',
      host: 'abc123.hana.prod-eu10.hanacloud.ondemand.com',
      port: 443,
      user: 'MY-HDI_RT',
      database: 'H00',
    });
    expect(c?.password).toBe(SECRET);
    const options = buildHanaConnectOptions(c!.target, settings);
    expect(options).toMatchObject({
      serverNode: 'abc123.hana.prod-eu10.hanacloud.ondemand.com:443',
      uid: 'MY-HDI_RT',
      databaseName: 'H00',
      encrypt: true,
      currentSchema: 'MY-HDI_SCHEMA',
      sslTrustStore: expect.stringContaining('BEGIN CERTIFICATE'),
    });
    expect(JSON.stringify(options)).not.toContain(SECRET);
    expect(JSON.stringify(found)).not.toContain(SECRET);
  });

  it('keeps encrypt and sslValidateCertificate as the binding says, for hanatrial too', () => {
    const binding = {
      name: 'trial',
      label: 'hanatrial',
      credentials: { host: '10.0.0.5', port: 39015, user: 'U', password: 'x', encrypt: 'false', sslValidateCertificate: false },
    };
    const [c] = connectionsFromVcap({ hanatrial: [binding] }, '.env', '/p').candidates;
    expect(buildHanaConnectOptions(c!.target, settings)).toMatchObject({
      serverNode: '10.0.0.5:39015',
      encrypt: false,
      sslValidateCertificate: false,
    });
  });

  it('gives a HANA Cloud binding without a port 443 and TLS, by the same rule as a hana:// URL', () => {
    const { target } = hanaTarget({ host: 'x1.hana.prod-us10.hanacloud.ondemand.com', user: 'U', password: 'p' }, 'the binding');
    expect(target.port).toBe(443);
    expect(buildHanaConnectOptions(target, settings)).toMatchObject({
      serverNode: 'x1.hana.prod-us10.hanacloud.ondemand.com:443',
      encrypt: true,
    });
    const onPremise = hanaTarget({ host: 'db.example.com', user: 'U', password: 'p' }, 'the binding').target;
    expect(buildHanaConnectOptions(onPremise, settings)).toMatchObject({ serverNode: 'db.example.com:30015' });
    expect(buildHanaConnectOptions(onPremise, settings).encrypt).toBeUndefined();
  });

  it('reads host and port from an HDI binding’s JDBC url when host is missing', () => {
    const { target } = hanaTarget({ url: 'jdbc:sap://hdi.example.com:30041/?currentschema=X', user: 'U', password: 'p' }, 'the binding');
    expect(buildHanaConnectOptions(target, settings).serverNode).toBe('hdi.example.com:30041');
  });

  it('maps a postgresql binding (hostname, username, dbname) and falls back to its uri', () => {
    const found = connectionsFromVcap(
      { 'postgresql-db': [postgresBinding('orders', 'postgres://app@db.example.com:6543/orders', SECRET)] },
      'default-env.json',
      '/p',
    );
    expect(found.candidates[0]).toMatchObject({
      name: 'orders',
      target: { engine: 'postgres', host: 'db.example.com', port: 6543, user: 'app', database: 'orders' },
    });
    expect(found.candidates[0]?.password).toBe(SECRET);
    const byUri = connectionsFromVcap(
      { postgresql: [{ name: 'u', credentials: { uri: `postgres://me:${SECRET}@h:5433/d`, sslrootcert: 'x' } }] },
      'x',
      '/p',
    );
    expect(byUri.candidates[0]).toMatchObject({
      target: { host: 'h', port: 5433, user: 'me', database: 'd', options: { sslmode: 'require' } },
    });
    expect(byUri.candidates[0]?.password).toBe(SECRET);
  });

  it('notes unknown services and bindings without credentials, and uses the rest', () => {
    const found = connectionsFromVcap(
      {
        redis: [{ name: 'cache', credentials: { password: SECRET } }],
        hana: [{ name: 'empty' }, hanaBinding('good')],
        xsuaa: 'not a list',
      },
      'default-env.json',
      '/p',
    );
    expect(found.candidates.map((c) => c.name)).toEqual(['good']);
    expect(found.notes).toEqual([
      'the redis binding "cache" in default-env.json is not a database hanactl serves (hana, hanatrial, postgresql); ignored.',
      'the hana binding "empty" in default-env.json has no credentials; ignored.',
      'VCAP_SERVICES.xsuaa in default-env.json is not a list of bindings; ignored.',
    ]);
  });

  it('names a binding missing its host without echoing any value', () => {
    const found = connectionsFromVcap({ hana: [{ name: 'x', credentials: { user: 'U', password: SECRET } }] }, 'default-env.json', '/p');
    expect(found.notes).toEqual(['the hana binding "x" in default-env.json has no credentials.host. Ignored.']);
  });

  it('prefers TARGET_CONTAINER, names bindings safely and keeps repeated names apart', () => {
    const found = connectionsFromVcap({ hana: [hanaBinding('a b'), hanaBinding('a b'), hanaBinding('target')] }, 'f', '/p', 'target');
    expect(found.candidates.map((c) => c.name)).toEqual(['a-b', 'a-b-2', 'target']);
    expect(found.preferred).toBe('target');
  });

  it('refuses a VCAP_SERVICES that is not an object, naming where it was', () => {
    expect(() => connectionsFromVcap('[1,2]', 'the caller’s environment', '/p')).toThrow(SourceError);
    expect(() => connectionsFromVcap('{"hana": [', '.env', '/p')).toThrow(/^VCAP_SERVICES in \.env is not valid JSON/);
  });
});

describe('CAP cds.requires.db', () => {
  it('reads the default (with [development] laid over it) and each profile', () => {
    const entries = capDbEntries({
      requires: {
        db: { kind: 'sql', '[production]': { kind: 'hana' }, '[development]': { credentials: { url: 'dev.sqlite' } } },
        '[hybrid]': { db: { kind: 'hana', binding: { type: 'cf', instance: 'my-hana', key: 'my-key' } } },
      },
    });
    expect(entries).toEqual([
      { profile: null, kind: 'sql', credentials: { url: 'dev.sqlite' } },
      { profile: 'production', kind: 'hana' },
      { profile: 'hybrid', kind: 'hana', binding: { type: 'cf', instance: 'my-hana', key: 'my-key' } },
    ]);
    expect(capDbEntries({ requires: { db: 'sqlite' } })).toEqual([{ profile: null, kind: 'sqlite' }]);
    expect(engineOfKind('sql', null)).toBe('sqlite');
    expect(engineOfKind('sql', 'production')).toBe('hana');
  });

  it('turns SQLite credentials.url into a path relative to the project root', () => {
    const found = connectionsFromCap(
      capDbEntries({ requires: { db: { kind: 'sqlite', credentials: { url: 'db.sqlite' } } } }),
      'package.json',
      '/work/cap',
      () => undefined,
    );
    expect(found.candidates[0]).toMatchObject({ name: 'db', target: { engine: 'sqlite', path: '/work/cap/db.sqlite' } });
  });

  it('says plainly when a db holds only a cloud binding, with the command that resolves it', () => {
    const entries = capDbEntries({
      requires: { '[hybrid]': { db: { kind: 'hana', binding: { type: 'cf', instance: 'my-hana', key: 'my-key' } } } },
    });
    const found = connectionsFromCap(entries, '.cdsrc-private.json', '/p', () => undefined);
    expect(found.candidates).toEqual([]);
    expect(found.notes[0]).toMatch(/only a cloud binding reference .*cf service instance "my-hana" with key "my-key"/);
    expect(found.notes[0]).toContain('cds bind --exec --profile hybrid -- <command>');
  });

  it('notes an in-memory SQLite db and a server kind without credentials', () => {
    const memory = connectionsFromCap(capDbEntries({ requires: { db: { kind: 'sqlite' } } }), 'package.json', '/p', () => undefined);
    expect(memory.notes[0]).toMatch(/in-memory SQLite database .*cds deploy --to sqlite/);
    const hana = connectionsFromCap(capDbEntries({ requires: { db: { kind: 'hana' } } }), 'package.json', '/p', () => undefined);
    expect(hana.notes[0]).toMatch(/declares kind "hana" without credentials; they come from a binding/);
  });

  it('takes the kind from a lower file when this one holds only credentials', () => {
    const entries = capDbEntries({ requires: { db: { credentials: { host: 'pg', user: 'u', password: SECRET, database: 'd' } } } });
    const found = connectionsFromCap(entries, '.cdsrc-private.json', '/p', () => 'postgres');
    expect(found.candidates[0]).toMatchObject({ name: 'db', target: { engine: 'postgres', host: 'pg', user: 'u', database: 'd' } });
    expect(JSON.stringify(found)).not.toContain(SECRET);
  });
});
