import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { rawRequest, socketOf } from './helpers/daemon-api.js';
import { report } from './helpers/figures.js';
import { daemonPids, killHome } from './helpers/procs.js';
import { isRoot } from './helpers/run.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const SECRET = plantSecret('socket');

/** uid and gid of `nobody`, when this runs as root and the tools to switch users exist. */
function nobody(): { uid: number; gid: number } | undefined {
  if (!isRoot()) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'nobody'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  const runuser = spawnSync('sh', ['-c', 'command -v runuser'], { encoding: 'utf8' });
  if (uid.status !== 0 || runuser.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
const other = nobody();
if (!other) {
  const why = 'the other-uid checks need root, `runuser` and a `nobody` user';
  if (process.env.CI) throw new Error(`${why} (CI runs as root)`);
  console.warn(`Skipping: ${why}.`);
}

/** What another user (`nobody`) gets when it asks the daemon for the connection list. */
function asNobody(socket: string): { connected: boolean; code?: string; status?: number; body?: string } {
  const script = `
    const s = require('node:net').createConnection(process.argv[1]);
    let d = '';
    s.on('connect', () => s.write('GET /v1/connections HTTP/1.1\\r\\nhost: x\\r\\nx-hanactl-client: hanactl-cli\\r\\nconnection: close\\r\\n\\r\\n'));
    s.on('data', (c) => (d += c));
    s.on('end', () => console.log(JSON.stringify({ connected: true, status: Number(d.split(' ')[1]), body: d.slice(d.indexOf('\\r\\n\\r\\n') + 4).slice(0, 400) })));
    s.on('error', (e) => console.log(JSON.stringify({ connected: false, code: e.code })));`;
  const r = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', script, socket], {
    encoding: 'utf8',
    cwd: '/',
    timeout: 15_000,
  });
  if (r.status !== 0) throw new Error(`the nobody client failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim());
}

describe.skipIf(!other)('a client of another uid', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  let socket: string;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    scan.addHome(home.dir);
    // The home must be traversable for the test to reach the run folder: only that folder guards.
    chmodSync(home.dir, 0o711);
    await home.ok(['add', '--no-test', 'secret-db', 'postgres://u@127.0.0.1:1/db', '--password-stdin'], { input: SECRET });
    socket = socketOf(home);
  });

  afterAll(async () => {
    await home.stop();
    killHome(home.dir);
    rmSync(home.dir, { recursive: true, force: true });
    report('socket-other-uid', figures);
  });

  it('is stopped by the 0700 socket folder even when the socket itself is loosened to 0666', () => {
    expect(statSync(join(home.dir, 'run')).mode & 0o777).toBe(0o700);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    figures.socket0600 = asNobody(socket);
    chmodSync(socket, 0o666);
    const result = asNobody(socket);
    figures.socket0666Folder0700 = result;
    expect(result).toEqual({ connected: false, code: 'EACCES' });
  });

  // Node has no SO_PEERCRED API, so the daemon cannot ask who a peer is; it re-checks its
  // folder on every request instead: once the folder is loosened, requests are refused and the
  // folder and socket are closed again.
  it('is refused by the daemon itself once the folder is loosened too, and the folder is closed again', () => {
    chmodSync(join(home.dir, 'run'), 0o755);
    const result = asNobody(socket);
    figures.socket0666Folder0755 = result;
    expect(result.connected && result.status === 200).toBe(false);
    expect(statSync(join(home.dir, 'run')).mode & 0o777).toBe(0o700);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
  });

  it('never sees a password even when served', () => {
    scan.add('nobody answers', figures);
    expect(scan.hits().hits).toEqual([]);
  });
});

describe('a socket folder the daemon must not trust', () => {
  const made: TestHome[] = [];
  const elsewhere: string[] = [];
  const outcomes: Record<string, string> = {};
  afterAll(async () => {
    for (const h of made) {
      killHome(h.dir);
      rmSync(h.dir, { recursive: true, force: true });
    }
    for (const dir of elsewhere) rmSync(dir, { recursive: true, force: true });
    report('socket-folder-refusals', outcomes);
  });

  /** A folder with exactly these mode bits (mkdir's mode is filtered by the umask). */
  const folder = (path: string, mode: number) => {
    mkdirSync(path);
    chmodSync(path, mode);
  };
  const cases: [string, (run: string) => void, RegExp][] = [
    ['group-accessible (0750)', (run) => folder(run, 0o750), /accessible to other users \(mode 750\).*chmod 700/],
    ['group-writable (0770)', (run) => folder(run, 0o770), /(accessible to|writable by) other users \(mode 770\).*chmod 700/],
    ['world-accessible (0705)', (run) => folder(run, 0o705), /accessible to other users \(mode 705\)/],
    ['world-writable (0777)', (run) => folder(run, 0o777), /(accessible to|writable by) other users \(mode 777\).*chmod 700/],
  ];
  if (other) {
    cases.push([
      'owned by another user',
      (run) => {
        folder(run, 0o700);
        chownSync(run, other.uid, other.gid);
      },
      new RegExp(`belongs to user id ${other.uid}, not to you`),
    ]);
  }
  cases.push([
    'a symbolic link (to a private folder)',
    (run) => {
      const target = mkdtempSync(join(tmpdir(), 'hanactl-elsewhere-'));
      elsewhere.push(target);
      symlinkSync(target, run);
    },
    /is a symbolic link/,
  ]);

  it.each(cases)('refuses to start when the folder is %s, with a sentence saying why', async (what, prepare, message) => {
    const home = new TestHome();
    made.push(home);
    const run = join(home.dir, 'run');
    prepare(run);
    const result = await home.run(['daemon', 'start'], { timeoutMs: 20_000 });
    outcomes[what] = `exit ${result.code}: ${result.stderr.trim().split('\n').pop()}`;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(daemonPids(home.dir)).toEqual([]);
    expect(existsSync(join(run, 'daemon.sock'))).toBe(false);
  });
});

describe('requests without the client header', () => {
  const home = new TestHome();
  let socket: string;
  const statuses: Record<string, number> = {};
  beforeAll(async () => {
    await home.ok(['daemon', 'start']);
    socket = socketOf(home);
  });
  afterAll(async () => {
    await home.dispose();
    killHome(home.dir);
    report('socket-client-header', { routes: Object.keys(statuses).length, statuses: [...new Set(Object.values(statuses))] });
  });

  it.each([
    ['GET', '/v1/health'],
    ['GET', '/v1/connections'],
    ['GET', '/v1/connections/x'],
    ['POST', '/v1/connections'],
    ['DELETE', '/v1/connections/x'],
    ['POST', '/v1/connections/x/test'],
    ['POST', '/v1/query'],
    ['POST', '/v1/catalog/tables'],
    ['POST', '/v1/sessions'],
    ['GET', '/v1/status'],
    ['GET', '/v1/pools'],
    ['GET', '/v1/audit'],
    ['GET', '/v1/queries'],
    ['POST', '/v1/keys/rotate'],
    ['POST', '/v1/trust'],
    ['POST', '/v1/projects/detect'],
    ['POST', '/v1/shutdown'],
    ['GET', '/v1/no-such-route'],
  ])('%s %s gets 403, also as a browser would send it', async (method, path) => {
    const body = method === 'GET' ? {} : { body: '{}' };
    const bare = await rawRequest(socket, { method, path, clientHeader: false, ...body });
    const browser = await rawRequest(socket, {
      method,
      path,
      clientHeader: false,
      headers: { origin: 'https://evil.example', 'sec-fetch-mode': 'cors' },
      ...body,
    });
    const empty = await rawRequest(socket, { method, path, clientHeader: false, headers: { 'x-hanactl-client': '' }, ...body });
    statuses[`${method} ${path}`] = bare.status;
    for (const r of [bare, browser, empty]) {
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body).error.code).toBe('FORBIDDEN');
    }
    // The daemon is still up (the shutdown without the header did nothing).
    expect((await rawRequest(socket, { method: 'GET', path: '/v1/health' })).status).toBe(200);
  });
});
