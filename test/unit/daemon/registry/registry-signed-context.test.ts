import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ConnectionService, toConnectionInfo } from '../../../../daemon/registry/connection-service.js';
import { Registry } from '../../../../daemon/registry/registry.js';

let dir: string | undefined;
let registry: Registry | undefined;
afterEach(() => {
  registry?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function service(): ConnectionService {
  dir = mkdtempSync(join(tmpdir(), 'hanactl-signed-registry-'));
  registry = Registry.open(join(dir, 'registry.db'), randomBytes(32));
  return new ConnectionService(registry, { forget: async () => {} });
}

it('makes a signing key once, keeps it off and on, never enumerates it, and forgets it with the connection', async () => {
  const connections = service();
  await connections.add({ name: 'shop', url: 'postgres://agent@db/shop', password: 'pw' });
  expect(connections.resolve('shop').contextKey).toBeUndefined();
  connections.update('shop', { signedContext: true });
  const key = connections.resolve('shop').contextKey;
  expect(key).toHaveLength(32);
  expect(toConnectionInfo(connections.resolve('shop')).signedContext).toBe(true);
  expect(JSON.stringify(connections.resolve('shop'))).not.toContain((key as Buffer).toString('hex'));
  connections.update('shop', { signedContext: false });
  expect(toConnectionInfo(connections.resolve('shop')).signedContext).toBeUndefined();
  connections.update('shop', { signedContext: true });
  expect(connections.resolve('shop').contextKey?.equals(key as Buffer)).toBe(true);
  expect(connections.contextSql('shop', {})).toContain('TO agent;');
  await connections.remove('shop');
  await connections.add({ name: 'shop', url: 'postgres://agent@db/shop', password: 'pw' });
  expect(connections.resolve('shop').contextKey).toBeUndefined();
});

it('stops signing when a replacement connection is not PostgreSQL', async () => {
  const connections = service();
  await connections.add({ name: 'shop', url: 'postgres://agent@db/shop', password: 'pw' });
  connections.update('shop', { signedContext: true });
  await connections.add({ name: 'shop', url: 'mysql://agent@db/shop', password: 'pw', replace: true });
  expect(connections.resolve('shop').signedContext).toBeUndefined();
  expect(() => connections.contextSql('shop', {})).toThrow(/PostgreSQL connections only/);
});
