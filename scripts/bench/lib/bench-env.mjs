// The benchmark's private hanactl: a temp HANACTL_HOME, its own registry key and daemon,
// connections registered the way a person does, every piece undone by the cleanup registry.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, run } from './processes.mjs';

/**
 * Starts a daemon with pool cap `poolMax` in a fresh home and returns how to reach it.
 * `node` is the node binary the shims run on (HANACTL_NODE).
 */
export async function startBenchHanactl({ repo, poolMax, cleanup }) {
  const bin = join(repo, 'bin/hanactl.js');
  const home = mkdtempSync(join(tmpdir(), 'hanactl-bench-'));
  cleanup.add('remove the bench home', () => rmSync(home, { recursive: true, force: true }));
  const { HANACTL_REGISTRY_KEY: _key, ...base } = process.env;
  const env = {
    ...base,
    HANACTL_HOME: home,
    HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64'),
    HANACTL_NODE: process.execPath,
  };
  writeFileSync(join(home, 'config.json'), `${JSON.stringify({ pool: { max: poolMax } })}\n`, { mode: 0o600 });
  const cli = (...args) => run(process.execPath, [bin, ...args], { env });

  let daemonPid;
  cleanup.add('stop the daemon', async () => {
    await cli('daemon', 'stop').catch(() => {});
    if (daemonPid && isAlive(daemonPid)) process.kill(daemonPid, 'SIGKILL');
  });
  await cli('daemon', 'start');
  const status = JSON.parse(await cli('daemon', 'status', '--json'));
  daemonPid = status.pid ?? status.daemon?.pid;
  if (!daemonPid) throw new Error(`hanactl daemon status --json carries no pid: ${JSON.stringify(status)}`);
  return {
    bin,
    home,
    env,
    daemonPid,
    socket: status.socket ?? status.daemon?.socket ?? join(home, 'run', 'daemon.sock'),
    cli,
    add: (name, url) => cli('add', name, url, '--no-password'),
    /** How an editor starts a session: `bin/hanactl-mcp [--connection NAME]`. */
    shimCommand: (connection) => ({ command: join(repo, 'bin/hanactl-mcp'), args: connection ? ['--connection', connection] : [], env }),
  };
}
