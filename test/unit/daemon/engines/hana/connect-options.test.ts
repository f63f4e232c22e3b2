import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  buildHanaConnectOptions,
  COMMUNICATION_BACKSTOP_MS,
  HANA_URL_OPTIONS,
  parseBooleanOption,
} from '../../../../../daemon/engines/hana/connect-options.js';
import { HanaDriver } from '../../../../../daemon/engines/hana/hana-driver.js';
import { parseConnectionUrl, type Target } from '../../../../../shared/connection-url.js';
import { refusal } from './helpers.js';

const settings = { connectTimeoutMs: 1500 };

function options(url: string, connectTimeoutMs = 1500) {
  return buildHanaConnectOptions(parseConnectionUrl(url).target, { connectTimeoutMs });
}

describe('buildHanaConnectOptions', () => {
  it('maps host, default port, user and the timeouts', () => {
    expect(options('hana://DBADMIN@hana.example.com')).toEqual({
      serverNode: 'hana.example.com:30015',
      uid: 'DBADMIN',
      connectTimeout: 1500,
      communicationTimeout: COMMUNICATION_BACKSTOP_MS,
    });
  });

  it('sets connectTimeout from the settings, and communicationTimeout only as a backstop past the longest call', () => {
    const o = options('hana://u@h:30041/T1?encrypt=true', 4321);
    expect(o.connectTimeout).toBe(4321);
    // A row fetch must not be cut by a connection-wide 10 s when its call may run 600 s (shared/schemas.ts).
    expect(o.communicationTimeout).toBe(COMMUNICATION_BACKSTOP_MS);
    expect(COMMUNICATION_BACKSTOP_MS).toBeGreaterThan(600_000);
    expect(buildHanaConnectOptions(parseConnectionUrl('hana://u@h').target, { connectTimeoutMs: 999.6 }).connectTimeout).toBe(1000);
  });

  it('refuses a timeout that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(refusal(() => options('hana://u@h', bad)).code).toBe('INTERNAL');
    }
  });

  it('takes the tenant database from the path', () => {
    const o = options('hana://u@h:30013/HXE');
    expect(o.serverNode).toBe('h:30013');
    expect(o.databaseName).toBe('HXE');
  });

  it('accepts databaseName as an option when the path has none, and refuses a conflict', () => {
    expect(options('hana://u@h:30013?databaseName=HXE').databaseName).toBe('HXE');
    expect(options('hana://u@h:30013/HXE?databaseName=HXE').databaseName).toBe('HXE');
    const err = refusal(() => options('hana://u@h:30013/HXE?databaseName=OTHER'));
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toContain('HXE');
    expect(err.message).toContain('OTHER');
  });

  it('maps TLS options and normalises booleans', () => {
    const o = options(
      'hana://u@h:30015/T?encrypt=TRUE&sslValidateCertificate=0&sslCryptoProvider=OpenSSL&sslTrustStore=/etc/ca.pem&sslHostNameInCertificate=*.example.com',
    );
    expect(o).toMatchObject({
      encrypt: true,
      sslValidateCertificate: false,
      sslCryptoProvider: 'openssl',
      sslTrustStore: '/etc/ca.pem',
      sslHostNameInCertificate: '*.example.com',
    });
  });

  it.each([
    ['true', true],
    ['1', true],
    ['yes', true],
    ['ON', true],
    ['', true],
    ['false', false],
    ['0', false],
    ['No', false],
    ['off', false],
  ])('reads the boolean %j as %s', (raw, expected) => {
    expect(parseBooleanOption('encrypt', raw)).toBe(expected);
  });

  it('refuses a boolean it cannot read, naming the option', () => {
    const err = refusal(() => options('hana://u@h?encrypt=maybe'));
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toContain('encrypt');
    expect(err.message).toContain('maybe');
  });

  it('matches option names case-insensitively and knows the CAP names', () => {
    expect(options('hana://u@h?ENCRYPT=true&currentschema=SALES').encrypt).toBe(true);
    expect(options('hana://u@h?currentschema=SALES').currentSchema).toBe('SALES');
    expect(options('hana://u@h?schema=SALES&validate_certificate=false&hostname_in_certificate=x.y')).toMatchObject({
      currentSchema: 'SALES',
      sslValidateCertificate: false,
      sslHostNameInCertificate: 'x.y',
    });
  });

  it('refuses the same option twice with different values', () => {
    expect(refusal(() => options('hana://u@h?schema=A&currentSchema=B')).code).toBe('INVALID_URL');
  });

  it('refuses an unknown option, naming it', () => {
    const err = refusal(() => options('hana://u@h?encrpyt=true'));
    expect(err.code).toBe('INVALID_URL');
    expect(err.message).toContain('"encrpyt"');
    expect(err.message).toContain('encrypt');
  });

  it('refuses options hanactl sets itself, saying why', () => {
    for (const key of ['connectTimeout', 'communicationTimeout', 'uid', 'serverNode']) {
      const err = refusal(() => options(`hana://u@h?${key}=1`));
      expect(err.code).toBe('INVALID_URL');
      expect(err.message).toContain(key);
    }
  });

  it('refuses values outside an enumeration and bad ports', () => {
    expect(refusal(() => options('hana://u@h?sslCryptoProvider=gnutls')).message).toContain('openssl');
    expect(refusal(() => options('hana://u@h?proxyPort=70000')).code).toBe('INVALID_URL');
    expect(options('hana://u@h?proxyHost=p&proxyPort=8080')).toMatchObject({ proxyHost: 'p', proxyPort: 8080 });
  });

  it('refuses an empty string option', () => {
    expect(refusal(() => options('hana://u@h?currentSchema=')).code).toBe('INVALID_URL');
  });

  it('turns on encryption by default on port 443 (SAP HANA Cloud), unless told otherwise', () => {
    expect(options('hana://u@abc.hana.prod-eu10.hanacloud.ondemand.com:443').encrypt).toBe(true);
    expect(options('hana://u@h:443?encrypt=false').encrypt).toBe(false);
    expect(options('hana://u@h:30015').encrypt).toBeUndefined();
  });

  it('gives a HANA Cloud host without a port 443 and TLS, any other host 30015 without', () => {
    const cloud = options('hana://DBADMIN@0f3e9a.hana.prod-eu10.hanacloud.ondemand.com');
    expect(cloud.serverNode).toBe('0f3e9a.hana.prod-eu10.hanacloud.ondemand.com:443');
    expect(cloud.encrypt).toBe(true);
    expect(options('hana://u@x.hana.trial-us10.hanacloud.ondemand.com?encrypt=false').encrypt).toBe(false);
    expect(options('hana://u@x.hana.trial-us10.hanacloud.ondemand.com:30015').encrypt).toBe(true);
    const plain = options('hana://u@db.example.com');
    expect(plain.serverNode).toBe('db.example.com:30015');
    expect(plain.encrypt).toBeUndefined();
    expect(options('hana://u@hanacloud.ondemand.com.evil.example').serverNode).toBe('hanacloud.ondemand.com.evil.example:30015');
  });

  it('brackets an IPv6 host', () => {
    expect(options('hana://u@[::1]:30015').serverNode).toBe('[::1]:30015');
  });

  it('refuses a target of another engine', () => {
    const target = parseConnectionUrl('postgres://u@h/db').target;
    expect(refusal(() => buildHanaConnectOptions(target, settings)).code).toBe('INTERNAL');
  });

  it('whitelists only client option names (no secrets)', () => {
    for (const name of Object.keys(HANA_URL_OPTIONS)) expect(name).not.toMatch(/pass|pwd|secret/i);
  });
});

describe('the password', () => {
  const password = 'pl4nted-Secret-9e1f';
  const target: Target = parseConnectionUrl('hana://u@h:30015/T?encrypt=true').target;

  it('is not in the connect options the driver keeps', () => {
    const driver = new HanaDriver(target, { password }, settings);
    const o = driver.connectOptions;
    expect(Object.keys(o)).not.toContain('pwd');
    expect(JSON.stringify(o)).not.toContain(password);
    expect(inspect(o, { showHidden: true, depth: 5 })).not.toContain(password);
  });

  it('never shows in the driver itself: keys, JSON or inspection', () => {
    const driver = new HanaDriver(target, { password }, settings);
    expect(JSON.stringify(driver)).not.toContain(password);
    expect(inspect(driver, { showHidden: true, depth: 5 })).not.toContain(password);
    for (const key of Object.getOwnPropertyNames(driver))
      expect(String((driver as unknown as Record<string, unknown>)[key])).not.toContain(password);
  });

  it('is read from a secret that keeps it non-enumerable', () => {
    const secret = Object.defineProperty({}, 'password', { value: password, enumerable: false });
    const driver = new HanaDriver(target, secret, settings);
    expect(JSON.stringify(driver)).not.toContain(password);
  });

  it('refuses bad URL options when the driver is built, before any network', () => {
    // parseConnectionUrl refuses it already; a target from elsewhere (a project file) meets the driver's check.
    const bad = { ...parseConnectionUrl('hana://u@h').target, options: { bogus: '1' } };
    expect(refusal(() => new HanaDriver(bad, { password }, settings)).code).toBe('INVALID_URL');
  });
});
