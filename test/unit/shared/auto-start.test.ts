import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDaemonInBackground } from '../../../shared/auto-start.js';
import { DaemonClient } from '../../../shared/daemon-client.js';
import { resolvePaths } from '../../../shared/paths.js';

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function home() {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-autostart-'));
  homes.push(dir);
  const env = { ...process.env, HANACTL_HOME: dir, HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') };
  const paths = resolvePaths(env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  return { env, paths, marker: paths.startMarker };
}

describe('starting the daemon from several callers at once', () => {
  it('waits for the caller that claimed the start instead of spawning a second daemon', async () => {
    const { env, paths, marker } = home();
    closeSync(openSync(marker, 'w'));
    let probes = 0;
    const started = Date.now();
    await startDaemonInBackground({
      paths,
      env,
      probe: async () => {
        probes++;
        if (Date.now() - started < 150) throw new Error('not yet');
      },
    });
    expect(probes).toBeGreaterThan(1);
    // Whoever spawns writes a start log first: this caller never did.
    expect(existsSync(paths.logDir)).toBe(false);
    expect(existsSync(marker)).toBe(true); // the claim is the other caller's to give back
  });

  it('takes over a claim its writer left behind, starts the daemon, and gives the claim back', async () => {
    const { env, paths, marker } = home();
    closeSync(openSync(marker, 'w'));
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(marker, old, old);
    const client = new DaemonClient({ socketPath: paths.socket, clientName: 'hanactl-cli' });
    try {
      await startDaemonInBackground({ paths, env, probe: () => client.health() });
      expect((await client.health()).pid).toBeGreaterThan(0);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await client.shutdown().catch(() => {});
      client.close();
    }
  }, 30_000);
});
