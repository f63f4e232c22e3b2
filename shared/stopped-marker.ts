import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cliCommand } from './cli-command.js';
import { HanactlError } from './errors.js';
import type { Paths } from './paths.js';
import { assertPrivateRunDir } from './private-run-dir.js';

/** What `hanactl daemon stop` (or the demo's Ctrl-C) leaves behind: when, and how to start it again. */
export interface StoppedMarker {
  readonly at: string;
  /** The command that starts this home's daemon again, as the person who stopped it would type it. */
  readonly restart: string;
}

/**
 * Records that a person stopped this home's daemon on purpose. While the marker stands, an
 * agent's relay does not start a daemon (an editor left open would otherwise bring back a daemon
 * someone just stopped); a daemon that starts for any other reason — `hanactl daemon start`,
 * `npm start`, any other `hanactl` command a person runs — removes it. It lives in the run
 * folder, so a reboot (which empties `$XDG_RUNTIME_DIR`) forgets it too.
 */
export function markStopped(paths: Paths, restart: string): void {
  assertPrivateRunDir(paths);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  const marker: StoppedMarker = { at: new Date().toISOString(), restart };
  writeFileSync(paths.stoppedMarker, `${JSON.stringify(marker)}\n`, { mode: 0o600 });
}

/** The marker, if a person stopped the daemon and none has started since. */
export function readStopped(paths: Paths): StoppedMarker | undefined {
  let text: string;
  try {
    text = readFileSync(paths.stoppedMarker, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as Partial<StoppedMarker>;
    return { at: String(parsed.at ?? ''), restart: typeof parsed.restart === 'string' ? parsed.restart : cliCommand('daemon start') };
  } catch {
    return { at: '', restart: cliCommand('daemon start') }; // unreadable, yet someone stopped it
  }
}

/** Removes the marker: a daemon is starting. */
export function clearStopped(paths: Paths): void {
  rmSync(paths.stoppedMarker, { force: true });
}

/** The error an agent's call gets while the marker stands: what happened and what a person runs. */
export function stoppedError(paths: Paths, marker: StoppedMarker): HanactlError {
  const when = marker.at ? ` at ${marker.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}` : '';
  return new HanactlError(
    'DAEMON_STOPPED',
    `The hanactl daemon for ${paths.home} was stopped on purpose${when}, and an agent's session does not start it again. Ask the person to start it (\`${marker.restart}\`), then retry the call.`,
  );
}
