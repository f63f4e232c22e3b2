import { readConfig } from '../../shared/config.js';
import { type CliContext, printJson } from '../context.js';
import { CliExit, EXIT } from '../exit.js';
import { createStyle, progressLine } from '../style.js';
import {
  type Check,
  checkConnections,
  checkDaemon,
  checkKey,
  checkKeyringModule,
  checkNode,
  checkRunDir,
  checkShimBundle,
  checkSqliteModule,
} from './doctor-checks.js';

export interface DoctorOptions {
  readonly json?: boolean;
  /** Seconds each connection test (and the keychain) may take. */
  readonly timeout?: string;
}

/** Which key source a daemon started from this shell would use (for comparing with the running one). */
function expectedKeySource(ctx: CliContext): string | undefined {
  if (process.env.HANACTL_REGISTRY_KEY) return 'env';
  try {
    return readConfig(ctx.paths.config).keyFile ? 'file' : 'keychain';
  } catch {
    return undefined;
  }
}

/**
 * `hanactl doctor`: checks the installation and the set-up, one line per check (ok, warn,
 * fail) with what to do next. Exit 1 when any check fails. Never starts the daemon.
 */
export async function doctor(ctx: CliContext, options: DoctorOptions): Promise<void> {
  const seconds = options.timeout === undefined ? 10 : Number(options.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) throw new CliExit(EXIT.usage, `--timeout takes seconds between 0 and 600, not "${options.timeout}".`);
  const timeoutMs = Math.round(seconds * 1000);
  const source = expectedKeySource(ctx);

  const checks: Check[] = [checkNode(), checkSqliteModule(), await checkKeyringModule(source === 'keychain')];
  checks.push(...(await checkKey(ctx.paths, process.env, timeoutMs)));
  // What an editor's session needs to start a daemon itself: it has its own environment, not this shell's.
  const { keyAdvice } = await import('./key-advice.js');
  const advice = await keyAdvice(ctx.paths, process.env, Math.min(timeoutMs, 5_000));
  checks.push({ name: 'editors', status: advice.editorReady ? 'ok' : 'warn', message: advice.message, ...(advice.fix ? { fix: advice.fix } : {}) });
  checks.push(checkRunDir(ctx.paths));
  const daemon = await checkDaemon(ctx.probe, source, timeoutMs);
  checks.push(...daemon.checks);
  if (daemon.health) {
    const progress = progressLine(process.stderr, 'Testing connections…');
    try {
      checks.push(...(await checkConnections(ctx.probe, timeoutMs, (done, total) => progress.update(`Testing connections… ${done}/${total}`))));
    } finally {
      progress.done();
    }
  }
  checks.push(checkShimBundle());

  const failed = checks.filter((c) => c.status === 'fail').length;
  if (options.json) {
    printJson(ctx, { ok: failed === 0, checks });
  } else {
    const style = createStyle(process.stdout);
    const width = Math.min(24, Math.max(...checks.map((c) => c.name.length)));
    for (const c of checks) {
      const label = c.status.padEnd(4);
      const painted = c.status === 'ok' ? style.ok(label) : c.status === 'warn' ? style.warn(label) : style.fail(label);
      ctx.out(`${painted}  ${c.name.padEnd(width)}  ${c.message}${c.fix ? ` ${style.dim('→')} ${c.fix}` : ''}`);
    }
    const warned = checks.filter((c) => c.status === 'warn').length;
    ctx.out(failed === 0 ? `\nNo problems found${warned ? ` (${warned} warning${warned > 1 ? 's' : ''})` : ''}.` : `\n${failed} check${failed > 1 ? 's' : ''} failed.`);
  }
  if (failed > 0) throw new CliExit(EXIT.failure);
}
