import { startDaemonInBackground } from '../shared/auto-start.js';
import { DaemonClient } from '../shared/daemon-client.js';
import { type Paths, resolvePaths } from '../shared/paths.js';
import { visibleJson } from '../shared/terminal-text.js';

/** What every command gets: paths, a daemon client, and the output streams. */
export interface CliContext {
  readonly paths: Paths;
  /** Starts the daemon when none answers. */
  readonly daemon: DaemonClient;
  /** Never starts a daemon (status and stop must not). */
  readonly probe: DaemonClient;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly stdin: NodeJS.ReadStream;
  readonly cwd: string;
}

export function createContext(): CliContext {
  const paths = resolvePaths();
  const probe = new DaemonClient({ socketPath: paths.socket, runDir: paths, clientName: 'hanactl-cli' });
  const daemon = new DaemonClient({
    socketPath: paths.socket,
    runDir: paths,
    clientName: 'hanactl-cli',
    autoStart: () => {
      process.stderr.write('hanactl: starting the daemon…\n');
      return startDaemonInBackground({ paths, probe: () => probe.health() });
    },
  });
  return {
    paths,
    daemon,
    probe,
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    stdin: process.stdin,
    cwd: process.cwd(),
  };
}

/**
 * Prints a value as stable, indented JSON. JSON.stringify escapes the C0 controls but leaves C1
 * controls and format characters (a bidi override) as they are; those are written as `\uXXXX`
 * too, so the text read in a terminal is the text parsed.
 */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out(visibleJson(JSON.stringify(value, null, 2)));
}
