import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The daemon log's lines (pino JSON, one per line); empty when there is no log yet. */
export function daemonLogLines(home: string): string[] {
  try {
    return readFileSync(join(home, 'logs', 'daemon.log'), 'utf8')
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Log lines of errors the daemon did not expect (the app's onError: a 500 was answered). */
export function unexpectedErrors(home: string): string[] {
  return daemonLogLines(home).filter((line) => line.includes('unexpected error'));
}

/** Writes `$HANACTL_HOME/config.json` (read at daemon start). */
export function writeConfig(home: string, config: Record<string, unknown>): void {
  writeFileSync(join(home, 'config.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}
