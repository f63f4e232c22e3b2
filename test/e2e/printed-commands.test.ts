import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { endChildrenAfterEach, track, waitForOutput } from '../helpers/children.js';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';

endChildrenAfterEach();

/** An indented line of the banner that runs this installation's CLI (with the home it needs). */
const CLI_LINE = /^ {2}((?:HANACTL_HOME=\S+ )?(?:node \S+\/bin\/hanactl\.js|hanactl) .+)$/gm;

describe('the commands `npm start` prints work exactly as printed', () => {
  const home = new TestHome({ keyInEnv: false });
  const elsewhere = mkdtempSync(join(tmpdir(), 'hanactl-elsewhere-'));
  afterAll(async () => {
    await home.dispose();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('from another terminal: another folder, no HANACTL_HOME, hanactl not on PATH', async () => {
    const demo = track(spawn(process.execPath, [BIN, 'demo'], { env: home.env, cwd: REPO }));
    let out = '';
    demo.stdout.on('data', (d) => (out += d));
    await waitForOutput(demo.stdout, /Stop with Ctrl-C/, () => out);

    const commands = [...out.matchAll(CLI_LINE)].map((m) => m[1] as string);
    expect(commands).toEqual([expect.stringMatching(/ mcp-config --client vscode --connection demo$/), expect.stringMatching(/ test demo$/)]);
    const { HANACTL_HOME: _home, ...terminal } = home.env;
    const path = (terminal.PATH ?? '').split(':').filter((dir) => !existsSync(join(dir, 'hanactl')));
    for (const command of commands) {
      const ran = spawnSync('sh', ['-c', command], { cwd: elsewhere, env: { ...terminal, PATH: path.join(':') }, encoding: 'utf8', timeout: 60_000 });
      expect(ran.status, `${command}\n${ran.stderr}`).toBe(0);
      if (command.includes('mcp-config')) expect(JSON.parse(ran.stdout).servers.hanactl.args).toEqual(['--connection', 'demo']);
      else expect(ran.stdout).toMatch(/demo/);
    }
    // The editor entries name programs that exist, by absolute path.
    const claude = /claude mcp add hanactl .* -- (\S+) --connection demo/.exec(out);
    expect(claude?.[1]).toMatch(/^\/.*\/bin\/hanactl-mcp$/);
    accessSync(claude?.[1] as string, constants.X_OK);

    const exited = new Promise((r) => demo.once('exit', r));
    demo.kill('SIGINT');
    await exited;
  });
});
