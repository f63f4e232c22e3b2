import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { closedPort } from '../helpers/ports.js';

interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  fix?: string;
}

describe('hanactl doctor on a healthy set-up', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('passes every check with exit 0, says the daemon is not running, and does not start it', async () => {
    const result = await home.run(['doctor']);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^ok {4}node /m);
    expect(result.stdout).toMatch(/^ok {4}key source +the HANACTL_REGISTRY_KEY environment variable/m);
    expect(result.stdout).toMatch(/^warn {2}daemon +not running/m);
    expect(result.stdout).toMatch(/No problems found/);
    expect((await home.run(['daemon', 'status'])).code).toBe(1);
  });

  it('tests a working connection through the running daemon; piped output has no colour', async () => {
    await home.ok(['add', '--no-test', 'mem', 'sqlite::memory:']);
    const result = await home.run(['doctor'], { env: { FORCE_COLOR: '1' } });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^ok {4}daemon +running, pid \d+, version /m);
    expect(result.stdout).toMatch(/^ok {4}connection mem +answers in [\d.]+ ms/m);
    expect(result.stdout).not.toContain('\u001b[');
  });
});

describe('hanactl doctor on a broken set-up', () => {
  const home = new TestHome();
  let checks: Check[];
  let text: { code: number | null; stdout: string };
  afterAll(() => home.dispose());

  beforeAll(async () => {
    const port = await closedPort();
    await home.ok(['add', '--no-test', 'mem', 'sqlite::memory:']);
    await home.ok(['add', '--no-test', 'dead', `postgres://app@127.0.0.1:${port}/shop`, '--no-password']);
    // Broken after the daemon started: a socket folder others can enter.
    // A running daemon closes a loosened folder again at its next request, so each run loosens it.
    chmodSync(join(home.dir, 'run'), 0o755);
    text = await home.run(['doctor', '--timeout', '5']);
    chmodSync(join(home.dir, 'run'), 0o755);
    const json = await home.run(['doctor', '--timeout', '5', '--json']);
    expect(json.code).toBe(1);
    checks = JSON.parse(json.stdout).checks;
  }, 60_000);

  it('exits 1', () => {
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/2 checks failed\./);
  });

  it('names the socket folder’s mode and the chmod that fixes it', () => {
    const runDir = join(home.dir, 'run');
    expect(checks.find((c) => c.name === 'socket folder')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(new RegExp(`${runDir}.*mode 755.*chmod 700 ${runDir}`)),
    });
    expect(text.stdout).toMatch(/^fail {2}socket folder +.*mode 755/m);
  });

  it('names the connection to a closed port, and what to do about it', () => {
    const dead = checks.find((c) => c.name === 'connection dead');
    expect(dead).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/Cannot reach PostgreSQL at 127\.0\.0\.1:\d+/),
      fix: expect.stringContaining(`${home.cli} add dead <url> --replace`),
    });
    expect(text.stdout).toMatch(/^fail {2}connection dead +Cannot reach PostgreSQL/m);
  });

  it('still reports what works', () => {
    expect(checks.find((c) => c.name === 'connection mem')?.status).toBe('ok');
    expect(checks.find((c) => c.name === 'registry')?.status).toBe('ok');
    expect(checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual(['socket folder', 'connection dead']);
  });

  it('names a key that does not open the registry, and a registry others can read', async () => {
    const wrongKey = (await import('node:crypto')).randomBytes(32).toString('base64');
    const wrong = await home.run(['doctor', '--json'], { env: { HANACTL_REGISTRY_KEY: wrongKey } });
    const found: Check[] = JSON.parse(wrong.stdout).checks;
    expect(found.find((c) => c.name === 'registry')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/does not open with the key/),
    });
    expect(found.find((c) => c.name === 'daemon key source')).toBeUndefined();

    chmodSync(join(home.dir, 'registry.db'), 0o644);
    const readable: Check[] = JSON.parse((await home.run(['doctor', '--json'])).stdout).checks;
    expect(readable.find((c) => c.name === 'registry')).toMatchObject({
      status: 'fail',
      fix: `chmod 600 ${join(home.dir, 'registry.db')}`,
    });
    chmodSync(join(home.dir, 'registry.db'), 0o600);
  });

  it('refuses a nonsense --timeout as a usage error', async () => {
    const r = await home.run(['doctor', '--timeout', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--timeout takes seconds/);
  });
});

describe('the daemon refuses a socket folder another user could use (what doctor checks)', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('will not start with a socket folder of mode 0755, and names the chmod', async () => {
    const { mkdirSync } = await import('node:fs');
    const runDir = join(home.dir, 'run');
    mkdirSync(runDir);
    chmodSync(runDir, 0o755);
    const r = await home.run(['daemon', 'start']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`chmod 700 ${runDir}`);
  });

  it('will not start with a socket folder that is a symbolic link', async () => {
    const { mkdirSync, rmSync, symlinkSync } = await import('node:fs');
    const runDir = join(home.dir, 'run');
    rmSync(runDir, { recursive: true, force: true });
    mkdirSync(join(home.dir, 'elsewhere'), { mode: 0o700 });
    symlinkSync(join(home.dir, 'elsewhere'), runDir);
    const r = await home.run(['daemon', 'start']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is a symbolic link/);
  });
});
