#!/usr/bin/env node
// The daemon's memory under MCP session churn: N sessions open (hello, handshake, one tool call)
// and close one after another over the daemon socket, as relays do; PSS of the daemon before,
// after the first 10 and after all N. Usage: node scripts/bench/session-churn.mjs [N]
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const total = Number(process.argv[2] ?? 200);
const home = mkdtempSync(join(tmpdir(), 'hanactl-churn-'));
const env = { ...process.env, HANACTL_HOME: home, HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') };
const cli = (...args) => execFileSync(process.execPath, [join(root, 'bin/hanactl.js'), ...args], { env, encoding: 'utf8' });
const pssKb = (pid) => Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1]);

function session() {
  return new Promise((done, fail) => {
    const s = connect(join(home, 'run', 'daemon.sock'));
    let buf = '';
    const hello = { hanactl: 'relay', v: 1, session: randomUUID(), pid: process.pid, cwd: home, context: {} };
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'churn', version: '1' } },
    };
    s.on('connect', () => s.write(`${JSON.stringify(hello)}\n${JSON.stringify(init)}\n`));
    s.on('data', (d) => {
      buf += d;
      if (buf.includes('"id":1,') && !buf.includes('"id":2,')) {
        s.write(
          '{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_connections","arguments":{}}}\n',
        );
        buf = buf.slice(buf.indexOf('"id":1,') + 5);
      } else if (buf.includes('"id":2,')) s.end();
    });
    s.on('close', done);
    s.on('error', fail);
  });
}

cli('daemon', 'start');
const pid = JSON.parse(cli('daemon', 'status', '--json')).pid;
try {
  await session(); // loads the tools
  const before = pssKb(pid);
  for (let i = 0; i < 10; i++) await session();
  const after10 = pssKb(pid);
  const started = performance.now();
  for (let i = 10; i < total; i++) await session();
  const ms = performance.now() - started;
  const afterAll = pssKb(pid);
  const listed = JSON.parse(cli('status', '--json')).sessions.length;
  console.log(
    JSON.stringify({
      sessions: total,
      daemonPssMb: { afterFirst: before / 1024, after10: after10 / 1024, afterAll: afterAll / 1024 },
      msPerSession: ms / (total - 10),
      stillListed: listed,
      loadavg: (await import('node:os')).loadavg(),
    }),
  );
} finally {
  cli('daemon', 'stop');
  rmSync(home, { recursive: true, force: true });
}
