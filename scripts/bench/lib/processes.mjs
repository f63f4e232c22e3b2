// Processes the benchmark starts, and what it reads about them from /proc.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { since } from './stats.mjs';

/** Proportional set size of a process in bytes (`/proc/<pid>/smaps_rollup`). */
export function pssBytes(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const match = /^Pss:\s+(\d+) kB/m.exec(text);
  if (!match) throw new Error(`no Pss line for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** Resident set size of a process in bytes (`/proc/<pid>/status` VmRSS). */
export function rssBytes(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(text);
  if (!match) throw new Error(`no VmRSS line for pid ${pid}`);
  return Number(match[1]) * 1024;
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Steps that undo what the run started (stop the daemon, kill servers, drop tables, remove
 * folders), run last-in first-out, each once, even when the run fails or is interrupted.
 */
export class Cleanup {
  #steps = [];
  #running;

  /** Registers a step; returns a function that runs it now and forgets it. Refused once the run is stopping. */
  add(label, step) {
    if (this.#running) throw new Error(`the run is stopping; not starting "${label}"`);
    const entry = { label, step };
    this.#steps.push(entry);
    return async () => {
      const i = this.#steps.indexOf(entry);
      if (i < 0) return;
      this.#steps.splice(i, 1);
      await step();
    };
  }

  run() {
    this.#running ??= (async () => {
      while (this.#steps.length > 0) {
        const { label, step } = this.#steps.pop();
        try {
          await step();
        } catch (err) {
          process.stderr.write(`bench: cleanup "${label}" failed: ${err.message}\n`);
        }
      }
    })();
    return this.#running;
  }
}

/** Spawns a process, waits for it to exit and returns how long that took and what it printed. */
export function spawnTimed(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = since(started);
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
      else resolve({ ms, stdout, stderr });
    });
  });
}

/** Runs a command to completion; rejects with its stderr when it fails. */
export async function run(command, args, options = {}) {
  return (await spawnTimed(command, args, options)).stdout;
}

/** CPU time (user + system) a process has used, in ms, from `/proc/<pid>/stat` (clock ticks of 10 ms). */
export function cpuMs(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state, field 3.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime (14) + stime (15)
  return ticks * 10;
}
