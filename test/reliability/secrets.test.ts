import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { report } from './helpers/figures.js';
import { daemonPids, killHome, waitFor } from './helpers/procs.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const SECRET = plantSecret('registry');
const tag = randomBytes(4).toString('hex');
/** Everything the registry must hide at rest: the name, the user, the database and the password. */
const MARKERS = { name: `mkname${tag}`, user: `mkuser${tag}`, database: `mkdb${tag}`, password: SECRET };

const registryFiles = (home: string) =>
  ['registry.db', 'registry.db-wal', 'registry.db-shm'].map((f) => join(home, f)).filter((f) => existsSync(f));
const digest = (file: string) => (existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'absent');

/** Which markers appear in the clear in any of the files. */
function plaintextIn(files: readonly string[]): string[] {
  const hits: string[] = [];
  for (const file of files) {
    const bytes = readFileSync(file);
    for (const [what, value] of Object.entries(MARKERS)) {
      if (bytes.includes(Buffer.from(value)) || bytes.includes(Buffer.from(value, 'utf16le'))) hits.push(`${what} in ${file}`);
    }
  }
  return hits;
}

describe('secrets at rest and on every error path', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  const figures: Record<string, unknown> = {};
  let shim: ShimHandle;

  beforeAll(async () => {
    scan.addHome(home.dir);
    await home.ok(['add', '--no-test', MARKERS.name, `postgres://${MARKERS.user}@127.0.0.1:1/${MARKERS.database}`, '--password-stdin'], {
      input: SECRET,
    });
    for (let i = 0; i < 20; i++)
      await home.ok(
        [
          'add',
          '--no-test',
          `${MARKERS.name}-${i}`,
          `postgres://${MARKERS.user}@127.0.0.1:1/${MARKERS.database}?application_name=n${i}`,
          '--password-stdin',
        ],
        { input: SECRET },
      );
    shim = await startShim(home.env, ['--connection', MARKERS.name]);
  });

  afterAll(async () => {
    await shim?.close();
    await home.stop();
    killHome(home.dir);
    rmSync(home.dir, { recursive: true, force: true });
    report('secrets', figures);
  });

  it('the registry, its WAL and its shared-memory file hold no name, user, database or password while the daemon runs', async () => {
    // Error paths first, so the files hold whatever they would write.
    for (const args of [['test', MARKERS.name], ['list', '--json'], ['status', '--json'], ['pools']]) await home.run(args);
    for (const call of [
      ['run_query', { sql: 'SELECT 1' }],
      ['run_query', { sql: 'SELEC broken' }],
      ['list_tables', {}],
      ['current_connection', {}],
    ] as const) {
      const r = await shim.call(call[0], call[1]);
      scan.add(`tool ${call[0]}`, textOf(r));
    }
    const files = registryFiles(home.dir);
    figures.registryFilesWhileRunning = files.map((f) => f.split('/').pop());
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    const hits = plaintextIn(files);
    figures.plaintextWhileRunning = hits.length;
    expect(hits).toEqual([]);
  });

  it('after a crash (kill -9) the files left behind, WAL included, hold none of it either', async () => {
    const [pid] = daemonPids(home.dir);
    process.kill(pid as number, 'SIGKILL');
    await waitFor(() => daemonPids(home.dir).length === 0, 5000);
    const files = registryFiles(home.dir);
    figures.registryFilesAfterCrash = files.map((f) => f.split('/').pop());
    const hits = plaintextIn(files);
    figures.plaintextAfterCrash = hits.length;
    expect(hits).toEqual([]);
  });

  it('a wrong key is refused with a sentence and leaves the registry and its WAL byte-identical', async () => {
    // The -shm file is SQLite's WAL index, rebuilt from the WAL by whoever opens it: not data.
    const before = Object.fromEntries(
      registryFiles(home.dir)
        .filter((f) => !f.endsWith('-shm'))
        .map((f) => [f, digest(f)]),
    );
    const wrong = await home.run(['daemon', 'start'], { env: { HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') } });
    scan.add('wrong key start', wrong.stdout + wrong.stderr);
    const after = Object.fromEntries(Object.keys(before).map((f) => [f, digest(f)]));
    figures.wrongKey = {
      exit: wrong.code,
      said: wrong.stderr.trim().split('\n').pop(),
      dbAndWalUnchanged: JSON.stringify(before) === JSON.stringify(after),
    };
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/cannot be opened with the key.*left untouched/);
    expect(after).toEqual(before);
    expect(daemonPids(home.dir)).toEqual([]);
    // The right key still opens it, with everything added before the crash.
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout) as { connections: { name: string }[] };
    figures.connectionsAfterCrashAndWrongKey = connections.length;
    expect(connections).toHaveLength(21);
  });

  it('the planted password is in no output, tool result, log, audit record or file under the home', async () => {
    await home.stop();
    scan.add('shim stderr', shim.stderr());
    for (const out of home.outputs) scan.add('cli output', out);
    const { hits, scannedFiles, scannedBytes } = scan.hits();
    figures.secretHits = hits.length;
    figures.scannedFiles = scannedFiles;
    figures.scannedBytes = scannedBytes;
    expect(existsSync(join(home.dir, 'audit.db'))).toBe(true);
    expect(hits).toEqual([]);
  });
});
