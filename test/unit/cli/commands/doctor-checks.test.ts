import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkNode, checkRunDir, checkShimBundle, checkSqliteModule } from '../../../../cli/commands/doctor-checks.js';
import { resolvePaths } from '../../../../shared/paths.js';
import { tempFolders } from '../../../helpers/temp-dir.js';

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

  describe('the shim bundle', () => {
    it('is ok when dist/shim.cjs is there', () => {
      const dir = folder();
      mkdirSync(join(dir, 'dist'));
      writeFileSync(join(dir, 'dist', 'shim.cjs'), '');
      expect(checkShimBundle(dir)).toMatchObject({ status: 'ok', message: join(dir, 'dist', 'shim.cjs') });
    });

    it('warns, with the build command, when it is missing', () => {
      const dir = folder();
      expect(checkShimBundle(dir)).toMatchObject({
        status: 'warn',
        message: expect.stringMatching(/shim\.cjs is missing.*full CLI/),
        fix: expect.stringMatching(/npm run build/),
      });
    });
  });
});
