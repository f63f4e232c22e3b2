// A process and everything below it, from /proc: the daemon and the SQLite hosts it starts.
import { readdirSync, readFileSync } from 'node:fs';
import { pssBytes } from './processes.mjs';

/** `pid` and its descendants. */
export function processTree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const tree = [];
  const visit = (p) => {
    tree.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return tree;
}

/** Summed PSS (bytes) of `pid` and its descendants; a process that ended meanwhile counts 0. */
export function treePssBytes(pid) {
  const pids = processTree(pid);
  const each = pids.map((p) => {
    try {
      return pssBytes(p);
    } catch {
      return 0;
    }
  });
  return { bytes: each.reduce((a, b) => a + b, 0), processes: pids.length, each };
}
