import { describe, expect, it } from 'vitest';
import { launchdPlist, systemdUnit } from '../../../cli/commands/daemon-service.js';

describe('the systemd user unit', () => {
  it('runs the daemon in the foreground by absolute paths, restarts on failure, starts with the session', () => {
    const unit = systemdUnit({
      node: '/usr/bin/node',
      bin: '/opt/hanactl/bin/hanactl.js',
      hanactlHome: '/home/ada/.hanactl-work',
      logDir: '/x',
    });
    expect(unit).toContain('\nExecStart=/usr/bin/node --max-semi-space-size=1 /opt/hanactl/bin/hanactl.js daemon start --foreground\n');
    expect(unit).toContain('\nEnvironment=HANACTL_HOME=/home/ada/.hanactl-work\n');
    expect(unit).toContain('\nRestart=on-failure\n');
    expect(unit).toContain('\n[Install]\nWantedBy=default.target\n');
  });

  it('has no Environment line without HANACTL_HOME', () => {
    expect(systemdUnit({ node: '/usr/bin/node', bin: '/b', logDir: '/x' })).not.toContain('Environment=');
  });

  it('quotes spaces and escapes systemd specifiers (%) and variables ($)', () => {
    const unit = systemdUnit({
      node: '/opt/my node/node',
      bin: '/srv/100%/$HOME/bin/hanactl.js',
      hanactlHome: '/data/a "b"',
      logDir: '/x',
    });
    expect(unit).toContain(
      'ExecStart="/opt/my node/node" --max-semi-space-size=1 /srv/100%%/$$HOME/bin/hanactl.js daemon start --foreground',
    );
    expect(unit).toContain('Environment="HANACTL_HOME=/data/a \\"b\\""');
  });
});

describe('the launchd agent', () => {
  it('lists the program arguments, HANACTL_HOME, and restarts only after a failure', () => {
    const plist = launchdPlist({
      node: '/usr/local/bin/node',
      bin: '/opt/h&h/bin/hanactl.js',
      hanactlHome: '/Users/ada/<home>',
      logDir: '/Users/ada/.hanactl/logs',
    });
    expect(plist).toContain('<string>dev.hanactl.daemon</string>');
    expect(plist).toContain(
      '<array>\n    <string>/usr/local/bin/node</string>\n    <string>--max-semi-space-size=1</string>\n    <string>/opt/h&amp;h/bin/hanactl.js</string>\n    <string>daemon</string>\n    <string>start</string>\n    <string>--foreground</string>\n  </array>',
    );
    expect(plist).toContain('<key>HANACTL_HOME</key>\n    <string>/Users/ada/&lt;home&gt;</string>');
    expect(plist).toMatch(/<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/);
    expect(plist).toContain('<string>/Users/ada/.hanactl/logs/launchd.log</string>');
  });
});
