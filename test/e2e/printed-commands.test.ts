import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { endChildrenAfterEach, track, waitForOutput } from '../helpers/children.js';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';
import { startShim, textOf } from '../helpers/mcp-client.js';

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
    expect(commands).toEqual([
      expect.stringMatching(/ mcp-config --client vscode --connection demo$/),
      expect.stringMatching(/ test demo$/),
    ]);
    const { HANACTL_HOME: _home, ...terminal } = home.env;
    const path = (terminal.PATH ?? '').split(':').filter((dir) => !existsSync(join(dir, 'hanactl')));
    for (const command of commands) {
      const ran = spawnSync('sh', ['-c', command], {
        cwd: elsewhere,
        env: { ...terminal, PATH: path.join(':') },
        encoding: 'utf8',
        timeout: 60_000,
      });
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

/** A terminal other than the one hanactl was set up in: another folder, no HANACTL_HOME, no `hanactl` on PATH. */
function elsewhereRunner(env: NodeJS.ProcessEnv, cwd: string) {
  const { HANACTL_HOME: _home, ...terminal } = env;
  const path = (terminal.PATH ?? '').split(':').filter((dir) => !existsSync(join(dir, 'hanactl')));
  return (command: string) =>
    spawnSync('sh', ['-c', command], { cwd, env: { ...terminal, PATH: path.join(':') }, encoding: 'utf8', timeout: 60_000 });
}

/** A command bare `hanactl` on a PATH that lacks it: what no hint may print. */
const BARE = /(?:`|: )hanactl (?:add|test|trust|daemon|explain-project|set|key|list|remove|mcp-config|import|tools|token|queries|cancel)\b/;

describe('the commands in advice and errors work exactly as printed, from a clone not on PATH', () => {
  const home = new TestHome();
  const elsewhere = mkdtempSync(join(tmpdir(), 'hanactl-elsewhere-'));
  const project = join(home.dir, 'project');
  const trusted = join(home.dir, 'trusted');
  afterAll(async () => {
    await home.dispose();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("the CLI's, the daemon's (to an agent) and the relay's (to an agent) hints run as printed", async () => {
    mkdirSync(project);
    writeFileSync(join(project, '.env'), 'HANA_HOST=localhost\n');
    mkdirSync(trusted);
    writeFileSync(join(home.dir, 'lite.db'), ''); // an empty file is an empty SQLite database
    const run = elsewhereRunner(home.env, elsewhere);
    const cli = home.cli;
    expect(cli).toBe(`HANACTL_HOME=${home.dir} node ${BIN}`);
    /** The commands a text prints for this installation and home, placeholders (`<name>`) left out. */
    const printed = (text: string, bare = false): string[] => {
      if (!bare) expect(text).not.toMatch(BARE);
      const at = new RegExp(`${cli.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} [^\`\n]*`, 'g');
      return [...text.matchAll(at)].map((m) => m[0].replace(/[.;,]$/, '')).filter((c) => !c.includes('<'));
    };
    const runs = (command: string) => {
      const ran = run(command);
      expect(ran.status, `${command}\n${ran.stdout}\n${ran.stderr}`).toBe(0);
      return ran.stdout;
    };

    // The CLI: a connection saved untested, a trusted folder.
    const added = await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'lite.db')}`]);
    expect(printed(added.stdout)).toEqual([`${cli} test lite`]);
    expect(runs(`${cli} test lite`)).toMatch(/lite/);
    const trust = await home.ok(['trust', trusted]);
    expect(printed(trust.stdout)).toEqual([`${cli} explain-project ${trusted}`]);
    expect(runs(`${cli} explain-project ${trusted}`)).toContain(trusted);

    // The daemon, to an agent: a project folder that needs a person's trust.
    const shim = await startShim(home.env, ['--project', project], 'hints-client');
    try {
      const untrusted = textOf(await shim.call('list_connections'));
      expect(printed(untrusted)).toEqual([`${cli} trust ${project}`]);
      runs(`${cli} trust ${project}`);
      expect(textOf(await shim.call('list_connections'))).not.toMatch(/not trusted/);

      // The relay, to an agent: a daemon a person stopped; and the CLI's and doctor's advice then.
      const stopped = await home.ok(['daemon', 'stop']);
      const refused = textOf(await shim.call('list_connections'));
      expect(refused).toMatch(/^DAEMON_STOPPED/);
      expect(printed(refused)).toEqual([`${cli} daemon start`]);
      expect(printed(stopped.stdout)).toEqual([`${cli} daemon start`]);
      const status = await home.run(['daemon', 'status']);
      expect(printed(status.stdout)).toEqual([`${cli} daemon start`]);
      const doctor = await home.run(['doctor']);
      expect(printed(doctor.stdout)).toContain(`${cli} daemon start`);

      runs(`${cli} daemon start`);
      const resumed = await shim.call('list_connections');
      expect(resumed.isError, textOf(resumed)).toBeFalsy();
      expect(textOf(resumed)).toContain('lite');

      // --help's examples (its usage line and descriptions name the commands as `hanactl`).
      const help = await home.ok(['--help']);
      expect(printed(help.stdout, true)).toContain(`${cli} list`);
      expect(runs(`${cli} list`)).toMatch(/lite/);
    } finally {
      await shim.close();
    }
  });
});
