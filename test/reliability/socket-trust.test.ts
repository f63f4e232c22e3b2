import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, TestHome } from '../helpers/hanactl-home.js';
import { startShim, textOf } from '../helpers/mcp-client.js';
import { report } from './helpers/figures.js';
import { daemonPids, killHome } from './helpers/procs.js';
import { isRoot } from './helpers/run.js';

/**
 * Finding: with the hanactl home where another user can write, that user swaps the socket folder
 * for their own socket, and `hanactl add --password-stdin` sends them the password. The clients
 * must check the home, every folder above the socket and the socket before a byte goes out; the
 * daemon must refuse such a home at start. "Another user" is `nobody` (this runs as root) or a
 * folder that group or others may write to.
 */

const SECRET = `pw-${Math.random().toString(36).slice(2)}-never-sent`;

function nobodyIds(): { uid: number; gid: number } | undefined {
  if (!isRoot()) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'nobody'], { encoding: 'utf8' });
  const uid = id('-u');
  const runuser = spawnSync('sh', ['-c', 'command -v runuser'], { encoding: 'utf8' });
  if (uid.status !== 0 || runuser.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}
const nobody = nobodyIds();

/** A socket that stands in for another user's: it records whether any byte arrived. */
class FakeDaemon {
  received = 0;
  readonly #server: Server;
  constructor(readonly path: string) {
    this.#server = createServer((socket) => {
      socket.on('data', (chunk) => {
        this.received += chunk.length;
        socket.destroy();
      });
      socket.on('error', () => {});
    });
  }
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.path, () => resolve());
    });
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const scratch: string[] = [];
const fakes: FakeDaemon[] = [];
const homes: string[] = [];
const outcomes: Record<string, string> = {};

afterAll(async () => {
  for (const fake of fakes) await fake.close();
  for (const home of homes) killHome(home);
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  report('socket-trust', outcomes);
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/** A folder with exactly these mode bits (mkdir's mode is filtered by the umask). */
function folder(path: string, mode: number): string {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
  return path;
}

async function fakeAt(path: string): Promise<FakeDaemon> {
  const fake = new FakeDaemon(path);
  fakes.push(fake);
  await fake.listen();
  return fake;
}

/** A layout: where HANACTL_HOME points, and the fake socket the attacker listens on. */
interface Layout {
  readonly home: string;
  readonly fake: FakeDaemon;
}

/** A home of its own (0700) in a fresh folder, its run folder (0700) and a socket at its place. */
async function privateLayout(parentMode = 0o755): Promise<Layout> {
  const parent = folder(join(tempDir('hanactl-trust-'), 'p'), parentMode);
  const home = folder(join(parent, 'home'), 0o700);
  folder(join(home, 'run'), 0o700);
  return { home, fake: await fakeAt(join(home, 'run', 'daemon.sock')) };
}

const cases: [string, () => Promise<Layout>, RegExp][] = [
  [
    'the home is world-writable (0777)',
    async () => {
      const layout = await privateLayout();
      chmodSync(layout.home, 0o777);
      return layout;
    },
    /hanactl home .*\/home is writable by other users \(mode 777\).*chmod 700 /,
  ],
  [
    'the home is group-writable (0770)',
    async () => {
      const layout = await privateLayout();
      chmodSync(layout.home, 0o770);
      return layout;
    },
    /hanactl home .* is writable by other users \(mode 770\).*chmod 700/,
  ],
  [
    'a folder above the home is world-writable without the sticky bit',
    () => privateLayout(0o777),
    /\/p is writable by other users \(mode 777\).*chmod go-w/,
  ],
  [
    'the run folder is a symbolic link to a folder with a socket',
    async () => {
      const layout = await privateLayout();
      const elsewhere = folder(join(tempDir('hanactl-attacker-'), 'run'), 0o700);
      const fake = await fakeAt(join(elsewhere, 'daemon.sock'));
      rmSync(join(layout.home, 'run'), { recursive: true });
      symlinkSync(elsewhere, join(layout.home, 'run'));
      return { home: layout.home, fake };
    },
    /socket folder .*\/run is a symbolic link/,
  ],
  [
    'the socket is a symbolic link to another socket',
    async () => {
      const layout = await privateLayout();
      await layout.fake.close();
      const elsewhere = folder(join(tempDir('hanactl-attacker-'), 'run'), 0o700);
      const fake = await fakeAt(join(elsewhere, 'daemon.sock'));
      symlinkSync(fake.path, join(layout.home, 'run', 'daemon.sock'));
      return { home: layout.home, fake };
    },
    /socket .*daemon\.sock is a symbolic link/,
  ],
];
if (nobody) {
  cases.push(
    [
      'the run folder belongs to another user',
      async () => {
        const layout = await privateLayout();
        chownSync(join(layout.home, 'run'), nobody.uid, nobody.gid);
        return layout;
      },
      new RegExp(`socket folder .*/run belongs to user id ${nobody.uid}, not to you`),
    ],
    [
      'the socket belongs to another user',
      async () => {
        const layout = await privateLayout();
        chownSync(layout.fake.path, nobody.uid, nobody.gid);
        return layout;
      },
      new RegExp(`socket .*daemon\\.sock belongs to user id ${nobody.uid}, not to you`),
    ],
    [
      'the home belongs to another user',
      async () => {
        const layout = await privateLayout();
        chownSync(layout.home, nobody.uid, nobody.gid);
        return layout;
      },
      new RegExp(`home .* belongs to user id ${nobody.uid}, not to you.*chown`),
    ],
    [
      'a folder above the home belongs to another user',
      async () => {
        const layout = await privateLayout();
        chownSync(join(layout.home, '..'), nobody.uid, nobody.gid);
        return layout;
      },
      new RegExp(`/p belongs to user id ${nobody.uid}, who could swap`),
    ],
  );
} else console.warn('Skipping the other-uid cases: they need root, runuser and a nobody user.');

const cli = new TestHome();
scratch.push(cli.dir);

describe('a client in front of a socket another user could have swapped in', () => {
  it('the fake socket does record what a client sends (the control)', async () => {
    const { home, fake } = await privateLayout();
    homes.push(home);
    await cli.run(['add', '--no-test', 'leak', 'postgres://u@127.0.0.1:1/db', '--password-stdin'], {
      input: SECRET,
      env: { HANACTL_HOME: home },
      timeoutMs: 20_000,
    });
    expect(fake.received).toBeGreaterThan(0);
  });

  it.each(cases)('when %s, `hanactl add --password-stdin` sends nothing and says why', async (what, prepare, message) => {
    const { home, fake } = await prepare();
    homes.push(home);
    const result = await cli.run(['add', '--no-test', 'leak', 'postgres://u@127.0.0.1:1/db', '--password-stdin'], {
      input: SECRET,
      env: { HANACTL_HOME: home },
      timeoutMs: 20_000,
    });
    outcomes[`cli: ${what}`] = result.stderr.trim().split('\n').pop() ?? '';
    expect(fake.received).toBe(0);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/unexpected error|INTERNAL/);
    expect(result.stderr + result.stdout).not.toContain(SECRET);
    expect(daemonPids(home)).toEqual([]);
  });

  it.each(cases)('when %s, the shim answers a tool call with the reason and sends nothing', async (what, prepare, message) => {
    const { home, fake } = await prepare();
    homes.push(home);
    const shim = await startShim({ ...cli.env, HANACTL_HOME: home });
    try {
      const result = await shim.call('list_connections');
      outcomes[`shim: ${what}`] = textOf(result);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
      expect(fake.received).toBe(0);
    } finally {
      await shim.close();
    }
  });
});

describe('the daemon in a home another user could swap its socket in', () => {
  const refusals = cases.filter(([what]) => !/socket (is|belongs)/.test(what));
  // `daemon start` refuses in the client's check, `--foreground` in the daemon's own (before it takes the lock).
  const runs = refusals.flatMap(([what, prepare, message]) =>
    [
      ['daemon', 'start'],
      ['daemon', 'start', '--foreground'],
    ].map((args) => [`${what} (${args.join(' ')})`, args, prepare, message] as const),
  );
  it.each(runs)('when %s, the start is refused with the folder and the fix', async (what, args, prepare, message) => {
    const { home, fake } = await prepare();
    await fake.close();
    rmSync(fake.path, { force: true });
    homes.push(home);
    const result = await cli.run(args, { env: { HANACTL_HOME: home }, timeoutMs: 30_000 });
    outcomes[`daemon: ${what}`] = result.stderr.trim().split('\n').pop() ?? '';
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(daemonPids(home)).toEqual([]);
  });
});

describe.skipIf(!nobody)('a socket the caller may not open', () => {
  it('EACCES is named with its cause and fix, by the CLI and by the shim, never as an unexpected error', async () => {
    if (!nobody) return;
    // nobody's own home, whose socket is closed to everyone (mode 000): connect() answers EACCES.
    const home = folder(join(tempDir('hanactl-eacces-'), 'home'), 0o700);
    chmodSync(join(home, '..'), 0o755);
    folder(join(home, 'run'), 0o700);
    const fake = await fakeAt(join(home, 'run', 'daemon.sock'));
    for (const path of [home, join(home, 'run'), fake.path]) chownSync(path, nobody.uid, nobody.gid);
    chmodSync(fake.path, 0o000);
    homes.push(home);
    const env = { ...cli.env, HANACTL_HOME: home };
    const asNobody = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, BIN, 'list'], {
      encoding: 'utf8',
      env,
      cwd: '/',
      timeout: 30_000,
    });
    outcomes['cli: EACCES'] = asNobody.stderr.trim();
    expect(asNobody.status).toBe(1);
    expect(asNobody.stderr).toMatch(/Permission denied on the hanactl socket .*daemon\.sock \(EACCES\).*HANACTL_HOME/);
    expect(asNobody.stderr).not.toMatch(/unexpected error|INTERNAL/);

    const shim = await startShimAs('nobody', env);
    try {
      const result = await shim.call('list_connections');
      outcomes['shim: EACCES'] = textOf(result);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Permission denied on the hanactl socket .* \(EACCES\)/);
      expect(textOf(result)).not.toMatch(/INTERNAL/);
    } finally {
      await shim.close();
    }
    expect(fake.received).toBe(0);
  });
});

/** The real shim started as another user (runuser), driven by the SDK's real client. */
async function startShimAs(user: string, env: NodeJS.ProcessEnv) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioClientTransport({
    command: 'runuser',
    args: ['-u', user, '--', process.execPath, BIN, 'mcp'],
    env: env as Record<string, string>,
    cwd: '/',
    stderr: 'pipe',
  });
  const client = new Client({ name: 'eacces-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    call: async (name: string) =>
      (await client.callTool({ name, arguments: {} })) as Awaited<ReturnType<Awaited<ReturnType<typeof startShim>>['call']>>,
    close: () => client.close(),
  };
}
