import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from '../../../../daemon/registry/registry.js';
import { hashToken, TokenService } from '../../../../daemon/tokens/token-service.js';
import { HanactlError } from '../../../../shared/errors.js';

describe('TokenService on a real registry', () => {
  let dir: string;
  let registry: Registry;
  let now: Date;
  let service: TokenService;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hanactl-tokens-'));
    registry = Registry.open(join(dir, 'registry.db'), randomBytes(32));
    now = new Date('2026-01-01T00:00:00Z');
    service = new TokenService(registry, {
      assertConnection: (name) => {
        if (name !== 'shop') throw new HanactlError('CONNECTION_NOT_FOUND', `There is no connection named "${name}".`);
      },
      touchIntervalMillis: 60_000,
      now: () => now,
    });
  });

  afterEach(() => {
    registry.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a token shown once, keeps its sha256 only, and verifies it', () => {
    const created = service.create({ label: 'ci', connection: 'shop' });
    expect(created).toEqual({
      label: 'ci',
      connection: 'shop',
      createdAt: now.toISOString(),
      lastUsedAt: null,
      token: expect.stringMatching(/^hanactl_/),
    });
    expect(registry.listTokens()).toEqual([
      { label: 'ci', hash: hashToken(created.token), connection: 'shop', created_at: now.toISOString(), last_used_at: null, context: null },
    ]);
    expect(service.verify(created.token)).toEqual({ label: 'ci', connection: 'shop' });
    expect(service.verify(`${created.token}x`)).toBeUndefined();
    expect(service.verify(created.token.replace('hanactl_', ''))).toBeUndefined();
    expect(JSON.stringify(service.list())).not.toContain(created.token);
  });

  it('writes last used at most once per interval', () => {
    const { token } = service.create({ label: 'a' });
    service.verify(token);
    const first = service.list()[0]?.lastUsedAt;
    expect(first).toBe(now.toISOString());
    now = new Date(now.getTime() + 30_000);
    service.verify(token);
    expect(service.list()[0]?.lastUsedAt).toBe(first);
    now = new Date(now.getTime() + 31_000);
    service.verify(token);
    expect(service.list()[0]?.lastUsedAt).toBe(now.toISOString());
  });

  it('revokes by label: the token stops verifying; an unknown label names the known ones', () => {
    const { token } = service.create({ label: 'gone' });
    service.create({ label: 'kept' });
    service.revoke('gone');
    expect(service.verify(token)).toBeUndefined();
    expect(() => service.revoke('gone')).toThrow('There is no token labelled "gone". Tokens: kept.');
  });

  it('refuses a taken label and a scope naming no connection', () => {
    service.create({ label: 'dup' });
    expect(() => service.create({ label: 'dup' })).toThrow(/A token labelled "dup" exists already/);
    expect(() => service.create({ label: 'x', connection: 'nope' })).toThrow('There is no connection named "nope".');
    expect(service.list().map((t) => t.label)).toEqual(['dup']);
  });
});
