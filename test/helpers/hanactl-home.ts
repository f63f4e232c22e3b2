import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hanactlCommand } from '../../shared/cli-command.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const BIN = join(REPO, 'bin/hanactl.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A private hanactl home in a fresh temp folder, with its own registry key and daemon. */
export class TestHome {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly outputs: string[] = [];

  constructor(options: { keyInEnv?: boolean; extraEnv?: NodeJS.ProcessEnv } = {}) {
    this.dir = mkdtempSync(join(tmpdir(), 'hanactl-test-'));
    const { HANACTL_REGISTRY_KEY: _k, ...base } = process.env;
    this.env = {
      ...base,
      HANACTL_HOME: this.dir,
      ...(options.keyInEnv === false ? {} : { HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') }),
      ...options.extraEnv,
    };
  }

  /** How hanactl names itself, for this home, in the commands it prints (shared/cli-command.ts). */
  get cli(): string {
    return hanactlCommand(this.env);
  }

  /** Runs `hanactl ...args` to completion. */
  run(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...this.env, ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        this.outputs.push(stdout, stderr);
        resolvePromise({ code, stdout, stderr });
      });
      child.stdin.end(options.input ?? '');
    });
  }

  /** Runs and insists on exit 0. */
  async ok(args: readonly string[], options: Parameters<TestHome['run']>[1] = {}): Promise<CliResult> {
    const result = await this.run(args, options);
    if (result.code !== 0) throw new Error(`hanactl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result;
  }

  async stop(): Promise<void> {
    await this.run(['daemon', 'stop']).catch(() => {});
  }

  async dispose(): Promise<void> {
    await this.stop();
    // HANACTL_TEST_KEEP=1 keeps the home (logs, run folder) to look at after a failure.
    if (!process.env.HANACTL_TEST_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }
}
