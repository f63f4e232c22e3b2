import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { DAEMON_NODE_FLAGS, hanactlBinPath } from '../../shared/auto-start.js';
import { cliCommand } from '../../shared/cli-command.js';
import { isHanactlError } from '../../shared/errors.js';
import { type CliContext, printJson } from '../context.js';
import { CliExit, EXIT } from '../exit.js';

export type ServicePlatform = 'linux' | 'macos';

/** What a service needs to know: node and bin/hanactl.js by absolute path, and HANACTL_HOME if set. */
export interface ServiceSpec {
  readonly node: string;
  readonly bin: string;
  readonly hanactlHome?: string;
  /** Where launchd writes the daemon's stderr (systemd keeps it in the journal). */
  readonly logDir: string;
}

export const SYSTEMD_UNIT = 'hanactl.service';
export const LAUNCHD_LABEL = 'dev.hanactl.daemon';

/** One ExecStart word: quoted when needed; `%` (specifiers) and `$` (variables) escaped. */
function systemdWord(word: string): string {
  const escaped = word.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_./:=@+%$-]+$/.test(escaped) ? escaped : `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The systemd user unit: the daemon in the foreground, restarted when it fails. */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = [spec.node, ...DAEMON_NODE_FLAGS, spec.bin, 'daemon', 'start', '--foreground'].map(systemdWord).join(' ');
  const env = spec.hanactlHome ? `Environment=${systemdWord(`HANACTL_HOME=${spec.hanactlHome}`)}\n` : '';
  return `# Written by \`hanactl daemon install\`; remove it with \`hanactl daemon uninstall\`.
[Unit]
Description=hanactl: database connection broker for AI agents

[Service]
Type=simple
ExecStart=${exec}
${env}Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The launchd agent: started at login, restarted when it exits with a failure. */
export function launchdPlist(spec: ServiceSpec): string {
  const args = [spec.node, ...DAEMON_NODE_FLAGS, spec.bin, 'daemon', 'start', '--foreground'].map((a) => `    <string>${xml(a)}</string>`).join('\n');
  const env = spec.hanactlHome ? `  <key>EnvironmentVariables</key>\n  <dict>\n    <key>HANACTL_HOME</key>\n    <string>${xml(spec.hanactlHome)}</string>\n  </dict>\n` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by \`hanactl daemon install\`; remove it with \`hanactl daemon uninstall\`. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
${env}  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>StandardErrorPath</key>
  <string>${xml(join(spec.logDir, 'launchd.log'))}</string>
</dict>
</plist>
`;
}

interface Target {
  readonly platform: ServicePlatform;
  readonly file: string;
  readonly text: string;
  /** Commands that load and start it; run only when the service manager answers. */
  readonly enable: readonly string[][];
  readonly disable: readonly string[][];
  /** Commands run after the file is removed. */
  readonly afterRemove: readonly string[][];
  readonly reachable: () => boolean;
}

function currentPlatform(): ServicePlatform {
  if (process.platform === 'linux') return 'linux';
  if (process.platform === 'darwin') return 'macos';
  throw new CliExit(EXIT.failure, `hanactl installs a service on Linux (systemd) and macOS (launchd), not on ${process.platform}; start the daemon at logon with \`${cliCommand('daemon start')}\`.`);
}

function answers(command: string, args: readonly string[]): boolean {
  const result = spawnSync(command, [...args], { stdio: 'ignore', timeout: 5000 });
  return result.status === 0;
}

function target(ctx: CliContext, platform: ServicePlatform, env: NodeJS.ProcessEnv = process.env): Target {
  const spec: ServiceSpec = { node: process.execPath, bin: hanactlBinPath(), logDir: ctx.paths.logDir, ...(env.HANACTL_HOME ? { hanactlHome: ctx.paths.home } : {}) };
  if (platform === 'linux') {
    const file = join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'systemd', 'user', SYSTEMD_UNIT);
    return {
      platform,
      file,
      text: systemdUnit(spec),
      enable: [
        ['systemctl', '--user', 'daemon-reload'],
        ['systemctl', '--user', 'enable', '--now', SYSTEMD_UNIT],
      ],
      disable: [['systemctl', '--user', 'disable', '--now', SYSTEMD_UNIT]],
      afterRemove: [['systemctl', '--user', 'daemon-reload']],
      reachable: () => answers('systemctl', ['--user', 'show-environment']),
    };
  }
  const file = join(homedir(), 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
  const domain = `gui/${process.getuid?.() ?? 501}`;
  return {
    platform,
    file,
    text: launchdPlist(spec),
    enable: [['launchctl', 'bootstrap', domain, file]],
    disable: [['launchctl', 'bootout', `${domain}/${LAUNCHD_LABEL}`]],
    afterRemove: [],
    reachable: () => process.platform === 'darwin' && answers('launchctl', ['print', domain]),
  };
}

const shown = (command: readonly string[]) => command.map((w) => (/^[A-Za-z0-9_./:=@+-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');

function run(commands: readonly string[][], tolerate = false): void {
  for (const command of commands) {
    const [cmd, ...args] = command as [string, ...string[]];
    const result = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
    if (result.status !== 0 && !tolerate) {
      throw new CliExit(EXIT.failure, `\`${shown(command)}\` failed: ${(result.stderr || result.error?.message || `exit ${result.status}`).trim()}`);
    }
  }
}

export interface ServiceOptions {
  readonly dryRun?: boolean;
  readonly platform?: ServicePlatform;
  readonly json?: boolean;
}

/** `hanactl daemon install`: writes the unit (or agent) and, when the manager answers, enables and starts it. */
export async function install(ctx: CliContext, options: ServiceOptions): Promise<void> {
  const t = target(ctx, options.platform ?? currentPlatform());
  // Said before anything is written, a dry run included: a service that cannot find its key never starts.
  const warnings = await keyWarnings(ctx);
  if (options.dryRun) {
    if (options.json) return printJson(ctx, { file: t.file, platform: t.platform, content: t.text, commands: t.enable.map(shown), written: false, warnings });
    for (const w of warnings) ctx.err(`warning: ${w}`);
    ctx.err(`Would write ${t.file} and run: ${t.enable.map(shown).join(' && ')}`);
    ctx.out(t.text.trimEnd());
    return;
  }
  if (!options.json) for (const w of warnings) ctx.err(`warning: ${w}`);
  const unchanged = existsSync(t.file) && readFileSync(t.file, 'utf8') === t.text;
  mkdirSync(dirname(t.file), { recursive: true });
  if (!unchanged) writeFileSync(t.file, t.text, { mode: 0o644 });
  const reachable = t.reachable();
  if (reachable) {
    await stopUnmanagedDaemon(ctx);
    run(t.enable);
  }
  if (options.json) return printJson(ctx, { file: t.file, platform: t.platform, written: !unchanged, enabled: reachable, commands: t.enable.map(shown), warnings });
  ctx.out(`${unchanged ? 'Unchanged' : 'Wrote'} ${t.file}.`);
  if (reachable) ctx.out(`The service is enabled and started (${t.platform === 'linux' ? `systemctl --user status ${SYSTEMD_UNIT}` : `launchctl print gui/$(id -u)/${LAUNCHD_LABEL}`} shows it).`);
  else ctx.out(`The service manager is not reachable from here; to enable and start the service, run:\n  ${t.enable.map(shown).join('\n  ')}`);
}

/**
 * Why the service would not find the registry key: it runs with none of this shell's environment
 * (hanactl never writes the key into a unit file), so only the keychain or a key file reaches it.
 */
async function keyWarnings(ctx: CliContext): Promise<string[]> {
  const warnings: string[] = [];
  if (process.env.HANACTL_REGISTRY_KEY) {
    warnings.push(
      `HANACTL_REGISTRY_KEY is set in this shell, but the service does not see it (hanactl never writes the key into a unit file). Use the OS keychain or a key file (\`${cliCommand('daemon start --key-file')}\`) with the service.`,
    );
  }
  const { keyAdvice } = await import('./key-advice.js');
  const { HANACTL_REGISTRY_KEY: _shellKey, ...serviceEnv } = process.env;
  const advice = await keyAdvice(ctx.paths, serviceEnv);
  if (!advice.editorReady) warnings.push(`the service would not find a registry key: ${advice.message.replace('a daemon an editor starts', 'the service')} ${advice.fix ?? ''}`.trim());
  return warnings;
}

/** A daemon started by hand holds the lock; the service's would exit at once. Stop it first. */
async function stopUnmanagedDaemon(ctx: CliContext): Promise<void> {
  try {
    await ctx.probe.health();
  } catch (err) {
    if (isHanactlError(err) && err.code === 'DAEMON_UNAVAILABLE') return;
    throw err;
  }
  ctx.err('Stopping the running daemon so that the service starts its own…');
  const { stop } = await import('./daemon.js');
  await stop({ ...ctx, out: () => {} }, {});
}

/** `hanactl daemon uninstall`: stops and disables the service when the manager answers, and removes the file. */
export async function uninstall(ctx: CliContext, options: ServiceOptions): Promise<void> {
  const t = target(ctx, options.platform ?? currentPlatform());
  const present = existsSync(t.file);
  if (options.dryRun) {
    if (options.json) return printJson(ctx, { file: t.file, platform: t.platform, present, commands: [...t.disable, ...t.afterRemove].map(shown), removed: false });
    ctx.out(present ? `Would run ${t.disable.map(shown).join(' && ')}, remove ${t.file}${t.afterRemove.length ? ` and run ${t.afterRemove.map(shown).join(' && ')}` : ''}.` : `Nothing to do: ${t.file} does not exist.`);
    return;
  }
  if (!present) {
    if (options.json) return printJson(ctx, { file: t.file, platform: t.platform, present: false, removed: false });
    ctx.out(`Nothing to do: ${t.file} does not exist.`);
    return;
  }
  const reachable = t.reachable();
  if (reachable) run(t.disable, true);
  rmSync(t.file, { force: true });
  if (reachable) run(t.afterRemove, true);
  if (options.json) return printJson(ctx, { file: t.file, platform: t.platform, present: true, removed: true, disabled: reachable });
  ctx.out(`Removed ${t.file}.`);
  if (!reachable) ctx.out(`The service manager is not reachable from here; if the service was enabled, also run:\n  ${[...t.disable, ...t.afterRemove].map(shown).join('\n  ')}`);
  else ctx.out('The service is stopped and disabled; the daemon now starts on demand again.');
}
