import { chmodSync, existsSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkNode, checkRunDir, checkShimSnapshot, checkSqliteModule } from '../../../cli/commands/doctor-checks.js';
import { resolvePaths } from '../../../shared/paths.js';
import { tempFolders } from '../../helpers/temp-dir.js';

const { folder } = tempFolders('hanactl-doctor-');

describe('doctor checks', () => {
  it.each([
    ['20.0.0', 'ok'],
    ['22.11.0', 'ok'],
    ['18.20.4', 'fail'],
  ])('node %s is %s', (version, status) => {
    const check = checkNode(version);
    expect(check.status).toBe(status);
    if (status === 'fail') expect(check.fix).toMatch(/Node 20/);
  });

  it('finds the SQLCipher build of SQLite', () => {
    expect(checkSqliteModule()).toMatchObject({ status: 'ok', message: expect.stringContaining('SQLCipher') });
  });

  describe('the socket folder', () => {
    const paths = (home: string) => resolvePaths({ HANACTL_HOME: home });

    it('is fine before it exists, and is not created by the check', () => {
      const p = paths(folder());
      expect(checkRunDir(p)).toMatchObject({ status: 'ok', message: expect.stringMatching(/does not exist yet/) });
      expect(existsSync(p.runDir)).toBe(false);
    });

    it('passes at 0700', () => {
      const p = paths(folder());
      mkdirSync(p.runDir, { mode: 0o700 });
      expect(checkRunDir(p).status).toBe('ok');
    });

    it('fails at 0755, naming chmod 700, and does not change the mode', () => {
      const p = paths(folder());
      mkdirSync(p.runDir);
      chmodSync(p.runDir, 0o755);
      const check = checkRunDir(p);
      expect(check.status).toBe('fail');
      expect(check.message).toMatch(/mode 755/);
      expect(check.message).toContain(`chmod 700 ${p.runDir}`);
    });

    it('fails on a symbolic link', () => {
      const home = folder();
      const p = paths(home);
      mkdirSync(join(home, 'elsewhere'), { mode: 0o700 });
      symlinkSync(join(home, 'elsewhere'), p.runDir);
      expect(checkRunDir(p)).toMatchObject({ status: 'fail', message: expect.stringMatching(/symbolic link/) });
    });
  });

  describe('the shim snapshot', () => {
    const install = (options: { blob?: boolean; builtBy?: string; bundle?: boolean }) => {
      const dir = folder();
      mkdirSync(join(dir, 'dist'));
      const node = join(dir, 'node');
      writeFileSync(node, '');
      utimesSync(node, new Date('2024-01-01'), new Date('2024-01-01'));
      if (options.blob) writeFileSync(join(dir, 'dist', 'shim.blob'), 'blob');
      if (options.bundle) writeFileSync(join(dir, 'dist', 'shim.cjs'), '');
      if (options.builtBy !== undefined) writeFileSync(join(dir, 'dist', 'shim.node'), `${options.builtBy === 'self' ? node : options.builtBy}\n`);
      return { dir, node };
    };

    it('is ok when this node built it', () => {
      const { dir, node } = install({ blob: true, builtBy: 'self' });
      expect(checkShimSnapshot(dir, node)).toMatchObject({ status: 'ok' });
    });

    it('warns when another node built it', () => {
      const { dir, node } = install({ blob: true, builtBy: '/usr/local/bin/node18' });
      expect(checkShimSnapshot(dir, node)).toMatchObject({ status: 'warn', message: expect.stringContaining('/usr/local/bin/node18'), fix: expect.stringMatching(/npm run build/) });
    });

    it('warns when node was replaced after the build', () => {
      const { dir, node } = install({ blob: true, builtBy: 'self' });
      utimesSync(node, new Date(), new Date(Date.now() + 60_000));
      expect(checkShimSnapshot(dir, node)).toMatchObject({ status: 'warn', message: expect.stringMatching(/changed after/) });
    });

    it('warns when there is none', () => {
      const { dir, node } = install({ bundle: true });
      expect(checkShimSnapshot(dir, node)).toMatchObject({ status: 'warn', message: expect.stringMatching(/missing.*bundled shim/) });
    });
  });
});
