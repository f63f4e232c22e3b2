import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/hanactl-home.js';

const require = createRequire(import.meta.url);
const SQLITE = 'better-sqlite3-multiple-ciphers';

/** Runs a program to its end, with a limit, and returns what it said. */
function run(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The SQLite module's binary as its installer looks for one in a local folder before it
 * downloads (prebuild-install's `<package>_local_prebuilds`): this checkout's own build, so the
 * install neither needs the download host nor compiles SQLite for minutes. The version is pinned
 * to the one built here, as a lockfile would.
 */
function localPrebuild(dir: string): { env: NodeJS.ProcessEnv; version: string } {
  const pkgDir = dirname(require.resolve(`${SQLITE}/package.json`));
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version as string;
  const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
  const libc = process.platform === 'linux' && !glibc ? 'musl' : '';
  const name = `${SQLITE}-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  const stage = join(dir, 'stage');
  mkdirSync(join(stage, 'build', 'Release'), { recursive: true });
  writeFileSync(
    join(stage, 'build', 'Release', 'better_sqlite3.node'),
    readFileSync(join(pkgDir, 'build', 'Release', 'better_sqlite3.node')),
  );
  const tar = spawnSync('tar', ['-czf', join(dir, name), '-C', stage, 'build'], { encoding: 'utf8' });
  expect(tar.status, tar.stderr).toBe(0);
  return { env: { [`npm_config_${SQLITE.replace(/[^a-zA-Z0-9]/g, '_')}_local_prebuilds`]: dir }, version };
}

/**
 * The published package as a user gets it: `npm pack`, installed into an empty folder, then its
 * own `hanactl` and `hanactl-mcp` run — no file of this checkout on the path. Slow (an npm
 * install), so one test.
 */
describe('the package installed from its tarball', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-pack-'));
  const app = join(dir, 'app');
  const home = join(dir, 'home');
  const env: NodeJS.ProcessEnv = { ...process.env, HANACTL_HOME: home, HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') };
  const bin = (name: string) => join(app, 'node_modules', '.bin', name);
  let client: Client | undefined;

  afterAll(async () => {
    await client?.close();
    await run(bin('hanactl'), ['daemon', 'stop'], { cwd: app, env, timeoutMs: 30_000 }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs, answers --version and doctor, and serves run_query through its own hanactl-mcp', async () => {
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: REPO,
      env: process.env,
      timeoutMs: 120_000,
    });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename as string);

    const prebuilds = join(dir, 'prebuilds');
    mkdirSync(prebuilds);
    const sqlite = localPrebuild(prebuilds);
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty', private: true, overrides: { [SQLITE]: sqlite.version } }));
    const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: app,
      env: { ...process.env, ...sqlite.env },
      timeoutMs: 540_000,
    });
    expect(installed.code, installed.stderr).toBe(0);

    const version = await run(bin('hanactl'), ['--version'], { cwd: app, env, timeoutMs: 30_000 });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);

    const doctor = await run(bin('hanactl'), ['doctor', '--json'], { cwd: app, env, timeoutMs: 60_000 });
    const report = JSON.parse(doctor.stdout) as { ok: boolean; checks: { name: string; status: string; message: string }[] };
    expect(report.ok, doctor.stdout).toBe(true);
    expect(report.checks.find((c) => c.name === 'sqlite module')).toMatchObject({ status: 'ok' });
    expect(report.checks.find((c) => c.name === 'keyring module')?.message).not.toMatch(/does not load/);

    const db = join(dir, 'lite.db');
    writeFileSync(db, ''); // an empty file is an empty SQLite database
    const added = await run(bin('hanactl'), ['add', 'lite', `sqlite:${db}`], { cwd: app, env, timeoutMs: 60_000 });
    expect(added.code, added.stderr).toBe(0);

    client = new Client({ name: 'package-install', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: bin('hanactl-mcp'),
        args: ['--connection', 'lite'],
        env: env as Record<string, string>,
        cwd: dir,
      }),
    );
    const result = (await client.callTool({ name: 'run_query', arguments: { sql: 'SELECT 6 * 7 AS answer' } })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ answer: 42 }], rowCount: 1 });
  }, 600_000);
});
