// Validation time of the statement policy on worst-case inputs near 1 MB (and the review's cases).
// Run after `npm run build`: node scripts/bench/validation.mjs
import { checkStatement } from '../../dist/daemon/policy/index.js';

const MB = 1024 * 1024 - 64;
const fill = (unit, prefix = 'SELECT ', suffix = '') =>
  prefix + unit.repeat(Math.floor((MB - prefix.length - suffix.length) / unit.length)) + suffix;
function nested(levels) {
  let sql = "SELECT '\\'";
  for (let n = 1; n <= levels; n++) sql = `SELECT query_to_xml($t${n}$${sql}$t${n}$, true, false, '')`;
  return sql;
}
const half = Math.floor(MB / 2 / 26);
const CASES = [
  ['18-level query_to_xml', 'postgres', nested(18)],
  ['EXPLAIN x 4000', 'postgres', `${'EXPLAIN '.repeat(4000)}SELECT 1`],
  ['1 MB of (', 'postgres', fill('(')],
  ['1 MB of balanced ( )', 'postgres', fill('(1)+') + '1'],
  ['1 MB of commas', 'postgres', fill('1,') + '1'],
  ['1 MB of short words', 'postgres', fill('a ')],
  ['1 MB of backslashes in strings', 'postgres', fill("'\\\\',") + '1'],
  ['1 MB of backslashes in strings', 'mysql', fill("'\\\\',") + '1'],
  ['1 MB of line comments', 'postgres', fill('--\n') + '1'],
  ['1 MB of nested query_to_xml calls', 'postgres', `SELECT ${"query_to_xml('SELECT 1', ".repeat(half)}1${')'.repeat(half)}`],
  ['1 MB string literal', 'postgres', `SELECT '${'x'.repeat(MB - 20)}'`],
  ['1 MB of $a$ quotes', 'postgres', fill('$a$$a$,') + '1'],
  ['1 MB of executable comments', 'mysql', fill('/*!99999 1*/') + '1'],
  ['1 MB of ::', 'postgres', fill('1::int+') + '1'],
  ['1 MB of non-ASCII', 'postgres', fill('é')],
  ['1 MB of query_to_xml literals', 'postgres', fill("query_to_xml('SELECT 1',true,false,''),") + '1'],
];
// Strings built by repeat() are ropes; a request body arrives flat, so flatten as JSON.parse would.
for (const [name, dialect, rope] of CASES) {
  const sql = JSON.parse(JSON.stringify(rope));
  checkStatement(sql, { dialect, allowWrite: false }); // warm
  const times = [];
  // CPU time of the process as well: on a machine shared with other work, wall time also counts the waits for a core.
  const cpu = [];
  let verdict;
  for (let r = 0; r < 7; r++) {
    const t = performance.now();
    const c = process.cpuUsage();
    verdict = checkStatement(sql, { dialect, allowWrite: false });
    const used = process.cpuUsage(c);
    times.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const ms = (x) => x.toFixed(1).padStart(7);
  console.log(
    `${name.padEnd(36)} ${dialect.padEnd(9)} ${String(sql.length).padStart(8)} B  median ${ms(times[3])} ms  worst ${ms(times[6])} ms  cpu ${ms(cpu[3])} ms  ${verdict.ok ? verdict.kind : verdict.rule}`,
  );
}
