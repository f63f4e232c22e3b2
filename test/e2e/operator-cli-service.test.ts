import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { endChildrenAfterEach, track, waitForOutput } from '../helpers/children.js';
import { BIN, TestHome } from '../helpers/hanactl-home.js';

endChildrenAfterEach();

describe('hanactl daemon install (the unit is checked, not started: there is no systemd user manager here)', () => {
  const home = new TestHome();
  const person = join(home.dir, 'person');
  const runtime = join(home.dir, 'xdg-runtime');
  mkdirSync(person);
  mkdirSync(runtime, { mode: 0o700 });
  // systemctl --user cannot reach any manager with these, so nothing outside the test home is touched.
  const env = { HOME: person, XDG_CONFIG_HOME: '', XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };
  const unitFile = join(person, '.config/systemd/user/hanactl.service');
  afterAll(() => home.dispose());

  it('--dry-run prints the systemd user unit: absolute node and bin, foreground, HANACTL_HOME, restart on failure; writes nothing', async () => {
    const r = await home.run(['daemon', 'install', '--dry-run', '--platform', 'linux'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`ExecStart=${process.execPath} --max-semi-space-size=1 ${BIN} daemon start --foreground\n`);
    expect(r.stdout).toContain(`Environment=HANACTL_HOME=${home.dir}\n`);
    expect(r.stdout).toMatch(/^Restart=on-failure$/m);
    expect(r.stdout).toMatch(/^\[Install\]\nWantedBy=default\.target$/m);
    expect(r.stdout).not.toContain('HANACTL_REGISTRY_KEY');
    expect(r.stderr).toContain(
      `Would write ${unitFile} and run: systemctl --user daemon-reload && systemctl --user enable --now hanactl.service`,
    );
    expect(existsSync(unitFile)).toBe(false);
  });

  it('--dry-run --platform macos prints the launchd agent', async () => {
    const r = await home.run(['daemon', 'install', '--dry-run', '--platform', 'macos', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.file).toBe(join(person, 'Library/LaunchAgents/dev.hanactl.daemon.plist'));
    expect(json.written).toBe(false);
    expect(json.content).toContain(
      `<string>${process.execPath}</string>\n    <string>--max-semi-space-size=1</string>\n    <string>${BIN}</string>\n    <string>daemon</string>`,
    );
    expect(json.content).toContain(`<key>HANACTL_HOME</key>\n    <string>${home.dir}</string>`);
    expect(json.commands).toEqual([expect.stringMatching(/^launchctl bootstrap gui\/\d+ /)]);
  });

  it('writes the unit, and prints the systemctl commands when systemd cannot be reached; again: unchanged', async () => {
    const r = await home.run(['daemon', 'install', '--platform', 'linux'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Wrote ${unitFile}.`);
    expect(r.stdout).toMatch(
      /not reachable from here.*\n {2}systemctl --user daemon-reload\n {2}systemctl --user enable --now hanactl\.service/s,
    );
    expect(r.stderr).toMatch(/HANACTL_REGISTRY_KEY is set in this shell, but the service does not see it/);
    expect(readFileSync(unitFile, 'utf8')).toContain(
      `ExecStart=${process.execPath} --max-semi-space-size=1 ${BIN} daemon start --foreground`,
    );
    expect((await home.run(['daemon', 'install', '--platform', 'linux'], { env })).stdout).toContain(`Unchanged ${unitFile}.`);
  });

  it('uninstall removes it, printing what to run; a second uninstall has nothing to do', async () => {
    const dry = await home.run(['daemon', 'uninstall', '--dry-run', '--platform', 'linux'], { env });
    expect(dry.stdout).toMatch(/Would run systemctl --user disable --now hanactl\.service, remove /);
    expect(existsSync(unitFile)).toBe(true);
    const r = await home.run(['daemon', 'uninstall', '--platform', 'linux'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Removed ${unitFile}.`);
    expect(r.stdout).toMatch(/systemctl --user disable --now hanactl\.service\n {2}systemctl --user daemon-reload/);
    expect(existsSync(unitFile)).toBe(false);
    expect((await home.run(['daemon', 'uninstall', '--platform', 'linux'], { env })).stdout).toMatch(/Nothing to do/);
  });
});

describe('hanactl daemon logs', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('says there is no log yet in a fresh home', async () => {
    const r = await home.run(['daemon', 'logs']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/No daemon log yet at .*daemon\.log/);
  });

  it('prints pino lines readably, --json raw, --lines N the last N', async () => {
    await home.ok(['add', '--no-test', 'mem', 'sqlite::memory:']);
    await home.ok(['daemon', 'stop']);
    const readable = (await home.ok(['daemon', 'logs'])).stdout.trim().split('\n');
    expect(readable[0]).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} INFO {2}daemon started {2}pid=\d+ socket=\S+ keySource=env version=\S+$/,
    );
    expect(readable.at(-1)).toMatch(/ INFO {2}daemon stopped {2}pid=\d+$/);
    const raw = (await home.ok(['daemon', 'logs', '--json'])).stdout.trim().split('\n');
    expect(raw.map((l) => JSON.parse(l).msg)).toContain('daemon started');
    expect((await home.ok(['daemon', 'logs', '--lines', '1'])).stdout.trim().split('\n')).toEqual([readable.at(-1)]);
    expect((await home.run(['daemon', 'logs', '--lines', 'all'])).code).toBe(2);
  });

  it('--follow prints lines as they are appended, until interrupted', async () => {
    const log = join(home.dir, 'logs', 'daemon.log');
    const child = track(
      spawn(process.execPath, [BIN, 'daemon', 'logs', '--follow', '--lines', '0'], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    let out = '';
    let err = '';
    // Listeners first, so that no chunk is missed by the waits below.
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const waitFor = (re: RegExp) => waitForOutput(child.stdout, re, () => out);
    // The follower says when it has fixed its starting point; from then on every appended line counts.
    await waitForOutput(child.stderr, /^Following .*daemon\.log/m, () => err);
    appendFileSync(log, `${JSON.stringify({ level: 40, time: Date.now(), pid: 1, msg: 'appended while following', n: 1 })}\n`);
    await waitFor(/WARN {2}appended while following {2}pid=1 n=1/);
    appendFileSync(log, 'half a li');
    appendFileSync(log, 'ne, then the rest\n');
    await waitFor(/half a line, then the rest/);
    const closed = new Promise<number | null>((r) => child.on('close', r));
    child.kill('SIGINT');
    expect(await closed).toBe(0);
    expect(out).not.toMatch(/daemon started/);
  });
});

describe('hanactl completion', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());
  const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

  it.each(['bash', 'zsh', 'fish'])('%s: the script names the commands and options', async (shell) => {
    const { stdout } = await home.ok(['completion', shell]);
    for (const word of [
      'daemon',
      'doctor',
      'key',
      'mcp-config',
      'completion',
      'install',
      'rotate',
      'export',
      'print-new-key',
      'passphrase-stdin',
      'claude-desktop',
    ]) {
      expect(stdout, word).toContain(word);
    }
  });

  it('bash: is valid and completes commands, sub-commands, options and choices', async () => {
    const script = join(home.dir, 'hanactl.bash');
    writeFileSync(script, (await home.ok(['completion', 'bash'])).stdout);
    const complete = (words: string[]) => {
      const driver = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hanactl; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync('bash', ['-c', driver], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n');
    };
    expect(complete(['hanactl', ''])).toEqual(expect.arrayContaining(['daemon', 'doctor', 'key', 'list', 'ls', 'completion', 'help']));
    expect(complete(['hanactl', 'da'])).toEqual(['daemon']);
    expect(complete(['hanactl', 'daemon', ''])).toEqual(
      expect.arrayContaining(['start', 'stop', 'status', 'install', 'uninstall', 'logs']),
    );
    expect(complete(['hanactl', 'key', 'rotate', '--'])).toEqual(['--print-new-key', '--json', '--help']);
    expect(complete(['hanactl', 'mcp-config', '--client', 'c'])).toEqual([
      'claude-code',
      'claude-desktop',
      'cursor',
      'codex',
      'cline',
      'continue',
    ]);
    expect(complete(['hanactl', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
  });

  it.skipIf(!has('zsh'))('zsh: is valid zsh', async () => {
    const script = join(home.dir, '_hanactl');
    writeFileSync(script, (await home.ok(['completion', 'zsh'])).stdout);
    const r = spawnSync('zsh', ['-n', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it.skipIf(!has('fish'))('fish: is valid and completes sub-commands', async () => {
    const script = join(home.dir, 'hanactl.fish');
    writeFileSync(script, (await home.ok(['completion', 'fish'])).stdout);
    const r = spawnSync('fish', ['-c', `source ${script}; complete -C 'hanactl daemon '`], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^install\trun the daemon as a service/m);
  });

  it('refuses an unknown shell as a usage error', async () => {
    expect((await home.run(['completion', 'powershell'])).code).toBe(2);
  });
});
