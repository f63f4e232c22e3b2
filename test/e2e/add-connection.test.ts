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

  it('reports a host it cannot reach as unreachable, with host:port and the cause', async () => {
    await home.ok(['add', 'far', 'postgres://app@[2001:db8::1]:5432/shop', '--no-password']);
    const result = await home.run(['test', 'far'], { timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Cannot reach PostgreSQL at \[?2001:db8::1\]?:5432 \((E[A-Z]+)\)|Cannot reach PostgreSQL at \[?2001:db8::1\]?:5432.*timeout/);
    expect(result.stderr).not.toMatch(/refused the connection/);
  });
});
