import { afterAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';

describe('hanactl add, from a script', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it.each([
    ['postgres', 'postgres://app@127.0.0.1:5432/shop'],
    ['mariadb', 'mariadb://app@127.0.0.1:3306/shop'],
    ['hana', 'hana://app@127.0.0.1:30015/HXE'],
  ])('refuses a %s connection when stdin is no terminal and no password source is given', async (engine, url) => {
    const name = `nopw-${engine}`;
    const result = await home.run(['add', name, url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Standard input is not a terminal.*--password-stdin.*--no-password/);
    expect((await home.ok(['list', '--json'])).stdout).not.toContain(name);
  });

  it('still adds a SQLite file (no password) and a user without one (--no-password)', async () => {
    await home.ok(['add', 'lite', 'sqlite::memory:']);
    await home.ok(['add', 'trusting', 'postgres://postgres@127.0.0.1:5432/postgres', '--no-password']);
    expect((await home.ok(['test', 'trusting'])).stdout).toMatch(/answers in/);
  });

  it('offers --replace when the name is taken', async () => {
    const again = await home.run(['add', 'lite', 'sqlite::memory:']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists.*--replace/);
  });

  it('tests before saving: a host it cannot reach is reported as unreachable, within the bound, and not saved', async () => {
    const started = performance.now();
    const result = await home.run(['add', 'far', 'postgres://app@[2001:db8::1]:5432/shop', '--no-password'], { timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(result.stderr).toMatch(/The connection test failed, so "far" was not saved: /);
    expect(result.stderr).toMatch(
      /Cannot reach PostgreSQL at \[?2001:db8::1\]?:5432 \((E[A-Z]+)\)|Cannot reach PostgreSQL at \[?2001:db8::1\]?:5432.*(timeout|did not answer)/,
    );
    expect(result.stderr).not.toMatch(/refused the connection/);
    expect(result.stderr).toMatch(/or save it untested with --no-test\.$/m);
    expect((await home.ok(['list', '--json'])).stdout).not.toContain('"far"');
  });

  it('refuses a closed port and a login the server rejects, saves nothing, and saves either with --no-test', async () => {
    const closed = await home.run(['add', 'closed', 'postgres://app@127.0.0.1:1/shop', '--no-password']);
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(
      /The connection test failed, so "closed" was not saved: .*127\.0\.0\.1:1.* Fix the URL or the password and run `[^`]*hanactl(?:\.js)? add` again, or save it untested with --no-test\./,
    );
    const login = await home.run(['add', 'stranger', `mariadb://nobody_${process.pid}@127.0.0.1:3306/test`, '--password-stdin'], {
      input: 'not-the-password',
    });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/The connection test failed, so "stranger" was not saved: /);
    expect(login.stderr).not.toContain('not-the-password');
    const listed = (await home.ok(['list', '--json'])).stdout;
    expect(listed).not.toContain('"closed"');
    expect(listed).not.toContain('"stranger"');
    const untested = await home.ok(['add', 'closed', 'postgres://app@127.0.0.1:1/shop', '--no-password', '--no-test']);
    expect(untested.stdout).toContain(`Saved untested; check it with: ${home.cli} test closed`);
    expect((await home.ok(['list', '--json'])).stdout).toContain('"closed"');
  });

  it('says the test passed when it did', async () => {
    const added = await home.ok(['add', 'pg-ok', 'postgres://postgres@127.0.0.1:5432/postgres', '--no-password']);
    expect(added.stdout).toMatch(/The connection test passed\./);
  });
});
