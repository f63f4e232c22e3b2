import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { endChildrenAfterEach, track, waitForOutput } from '../helpers/children.js';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';

endChildrenAfterEach();

/** A machine without a keychain (SSH, a container): the Secret Service bus is not there. */
const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/hanactl-test-bus' };

interface DoctorCheck {
  name: string;
  status: string;
  message: string;
  fix?: string;
}
const editorsCheck = (stdout: string) => (JSON.parse(stdout) as { checks: DoctorCheck[] }).checks.find((c) => c.name === 'editors');

describe('what an editor needs for the registry key', () => {
  const homes: TestHome[] = [];
  const newHome = (options?: ConstructorParameters<typeof TestHome>[0]) => {
    const home = new TestHome(options);
    homes.push(home);
    return home;
  };
  afterAll(async () => {
    for (const home of homes) await home.dispose();
  });

  it('with the key in HANACTL_REGISTRY_KEY: mcp-config, doctor and daemon install --dry-run say the editor and the service will not see it', async () => {
    const home = newHome();
    const printed = await home.ok(['mcp-config', '--client', 'cursor']);
    expect(printed.stdout).not.toContain('HANACTL_REGISTRY_KEY');
    expect(printed.stdout).not.toContain(home.env.HANACTL_REGISTRY_KEY);
    expect(printed.stderr).toMatch(
      /^warning: The registry key comes from HANACTL_REGISTRY_KEY in this shell\. An editor does not inherit/m,
    );
    expect(printed.stderr).toContain(`\`${home.cli} key import --in FILE --force --key-file\``);
    const doctor = await home.run(['doctor', '--json']);
    expect(editorsCheck(doctor.stdout)).toMatchObject({ status: 'warn', fix: expect.stringMatching(/hanactl(?:\.js)? daemon start/) });
    const dry = await home.ok(['daemon', 'install', '--dry-run'], {});
    expect(dry.stderr).toMatch(/^warning: HANACTL_REGISTRY_KEY is set in this shell, but the service does not see it/m);
  });

  it('with no keychain and no key file: each says so and names --key-file', async () => {
    const home = newHome({ keyInEnv: false, extraEnv: NO_KEYCHAIN });
    const printed = await home.ok(['mcp-config', '--client', 'vscode']);
    expect(printed.stderr).toMatch(
      /^warning: No OS keychain answers here \(.+\), so a daemon an editor starts cannot get its registry key/m,
    );
    expect(printed.stderr).toContain(`\`${home.cli} daemon start --key-file\``);
    const doctor = await home.run(['doctor', '--json']);
    expect(editorsCheck(doctor.stdout)).toMatchObject({ status: 'warn', message: expect.stringMatching(/No OS keychain answers here/) });
    const dry = JSON.parse((await home.ok(['daemon', 'install', '--dry-run', '--json'])).stdout) as {
      warnings: string[];
      written: boolean;
    };
    expect(dry.written).toBe(false);
    expect(dry.warnings).toEqual([
      expect.stringMatching(
        /^the service would not find a registry key: No OS keychain answers here .*, so the service cannot get its registry key.*--key-file/,
      ),
    ]);
  });

  it('with a key file: the editor needs nothing more, and nothing is warned', async () => {
    const home = newHome({ keyInEnv: false, extraEnv: NO_KEYCHAIN });
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ keyFile: true }));
    const printed = await home.ok(['mcp-config', '--client', 'cursor']);
    expect(printed.stderr.trim()).toBe(
      `Key source: The daemon reads its registry key from the key file ${join(home.dir, 'registry.key')}; an editor that starts it needs nothing more.`,
    );
    expect(editorsCheck((await home.run(['doctor', '--json'])).stdout)).toMatchObject({ status: 'ok' });
    const dry = await home.ok(['daemon', 'install', '--dry-run', '--json']);
    expect(JSON.parse(dry.stdout).warnings).toEqual([]);
  });

  it('the demo keeps its own key file when the shell exports HANACTL_REGISTRY_KEY, and its configs tell a daemon the editor starts to use it', async () => {
    const home = newHome(); // the key in the environment, as on a headless machine set up by the book
    const demo = track(spawn(process.execPath, [BIN, 'demo'], { env: home.env, cwd: REPO }));
    let [out, err] = ['', ''];
    demo.stdout.on('data', (d) => (out += d));
    demo.stderr.on('data', (d) => (err += d));
    await waitForOutput(demo.stdout, /Stop with Ctrl-C/, () => out);
    expect(err).toMatch(/HANACTL_REGISTRY_KEY is set in this shell; the demo does not use it/);
    expect(out).toContain("-e HANACTL_REGISTRY_KEY='' ");
    expect(out).toContain('"HANACTL_REGISTRY_KEY": ""');
    expect(out).not.toContain(home.env.HANACTL_REGISTRY_KEY);
    const exited = new Promise((r) => demo.once('exit', r));
    demo.kill('SIGINT');
    await exited;
    // What the printed config gives a daemon the editor starts: the variable emptied, the home's key file used.
    const listed = await home.ok(['list', '--json'], { env: { HANACTL_REGISTRY_KEY: '' } });
    expect(JSON.parse(listed.stdout).connections.map((c: { name: string }) => c.name)).toEqual(['demo']);
  });
});
