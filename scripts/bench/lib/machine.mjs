// What the numbers were measured on: the machine, the versions, the date.
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';

function versionOf(repo, pkg) {
  try {
    return JSON.parse(readFileSync(join(repo, pkg === '.' ? 'package.json' : `node_modules/${pkg}/package.json`), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

export const load = () => loadavg().map((v) => v.toFixed(2));

export function describeMachine(repo) {
  return {
    date: new Date().toISOString(),
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model?.trim() ?? 'unknown cpu',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${type()} ${release()}`,
    node: process.version,
    hanactl: versionOf(repo, '.'),
    mcpSdk: versionOf(repo, '@modelcontextprotocol/sdk'),
    pg: versionOf(repo, 'pg'),
    mysql2: versionOf(repo, 'mysql2'),
    loadStart: load(),
  };
}
