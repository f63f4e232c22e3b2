#!/usr/bin/env node
/**
 * Check cost of the statement policy on a generated family of adversarial inputs, per engine, up
 * to 1 MB: long runs of each token kind, and nesting (in depth and in width) of every construct
 * the checks recurse into or count: SQL text run by a function (in $tag$, '' and E'' strings),
 * comments, parentheses, subqueries, function calls, executable comments, SQLScript blocks,
 * EXPLAIN. Both layers run (token rules, and on PostgreSQL its own parser, libpg-query).
 *
 *   npm run build && node scripts/policy/validation-cost.mjs [--top N] [--filter TEXT] [--all]
 *
 * Prints the N costliest inputs (CPU time of the best of three checks, so that a busy machine's
 * waits for a core do not count) with their verdicts, the five costliest per engine, and the
 * machine's load. The bound it checks: any input under 1 MB is judged in under 50 ms of CPU. The
 * last line says PASS, or FAIL with every input over it, and the exit code is 1 on FAIL.
 */
import { cpus, loadavg } from 'node:os';
import { checkStatement } from '../../dist/daemon/policy/index.js';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const TOP = Number(option('--top', '25'));
const FILTER = option('--filter', '');
const SKIP = option('--skip', undefined);
const BOUND_MS = 50;
const MB = 1024 * 1024 - 64;
const SIZES = [1024, 32 * 1024, 128 * 1024, 256 * 1024, MB];

/** `prefix` + `unit` repeated to `size` characters + `suffix`. */
const fill = (size, unit, prefix = 'SELECT ', suffix = '') =>
  prefix + unit.repeat(Math.max(1, Math.floor((size - prefix.length - suffix.length) / unit.length))) + suffix;

/** Runs of one token kind: [name, engines, unit, prefix, suffix]. */
const ALL = ['postgres', 'mysql', 'sqlite', 'hana'];
const RUNS = [
  ['short words', ALL, 'a ', 'SELECT '],
  ['one long word', ALL, 'a', 'SELECT '],
  ['keywords', ALL, 'SELECT ', 'SELECT '],
  ['numbers', ALL, '1,', 'SELECT ', '1'],
  ['float numbers', ALL, '1.5e10,', 'SELECT ', '1'],
  ['casts', ['postgres'], '1::int+', 'SELECT ', '1'],
  ['strings', ALL, "'x',", 'SELECT ', '1'],
  ['one long string', ALL, 'x', "SELECT '", "'"],
  ['doubled quotes in a string', ALL, "''", "SELECT '", "'"],
  ['backslashes in strings', ALL, "'\\\\',", 'SELECT ', '1'],
  ['backslash-quote strings', ALL, "'\\'',", 'SELECT ', '1'],
  ['E strings', ['postgres'], "E'\\\\',", 'SELECT ', '1'],
  ['U& strings', ['postgres'], "U&'\\0041',", 'SELECT ', '1'],
  ['quoted identifiers', ALL, '"a",', 'SELECT ', '1'],
  ['backtick identifiers', ['mysql', 'sqlite'], '`a`,', 'SELECT ', '1'],
  ['bracket identifiers', ['sqlite'], '[a],', 'SELECT ', '1'],
  ['dollar quotes', ['postgres'], '$a$$a$,', 'SELECT ', '1'],
  ['dollar quote with text', ['postgres'], 'x', 'SELECT $a$', '$a$'],
  ['dollar tags of non-ASCII', ['postgres'], '$é$x$é$,', 'SELECT ', '1'],
  ['parameters', ['postgres'], '$1,', 'SELECT ', '1'],
  ['Tcl variables', ['sqlite'], '$a(b),', 'SELECT ', '1'],
  ['colon variables', ['sqlite', 'hana'], ':a,', 'SELECT ', '1'],
  ['line comments', ALL, '--\n', 'SELECT ', '1'],
  ['line comments with text', ALL, '-- x\n', 'SELECT ', '1'],
  ['hash comments', ['mysql'], '#\n', 'SELECT ', '1'],
  ['block comments', ALL, '/**/', 'SELECT ', '1'],
  ['one long block comment', ALL, 'x', 'SELECT 1 /*', '*/'],
  ['executable comments', ['mysql'], '/*!50000 1*/', 'SELECT ', ''],
  ['executable comments, no version', ['mysql'], '/*! 1*/', 'SELECT ', ''],
  ['MariaDB executable comments', ['mysql'], '/*M!100000 1*/', 'SELECT ', ''],
  ['optimizer hints', ['mysql'], '/*+ x */', 'SELECT ', '1'],
  ['open parentheses', ALL, '(', 'SELECT '],
  ['balanced parentheses', ALL, '(1)+', 'SELECT ', '1'],
  ['close parentheses', ALL, ')', 'SELECT 1'],
  ['semicolons', ALL, ';', 'SELECT 1'],
  ['statements', ALL, 'SELECT 1;', ''],
  ['function calls', ALL, 'f(1)+', 'SELECT ', '1'],
  ['denied-looking words', ALL, 'pg_sleep ', 'SELECT '],
  ['calls of a function that runs SQL', ['postgres'], "query_to_xml('SELECT 1',true,false,''),", 'SELECT ', '1'],
  ['SQLScript blocks', ['hana'], 'BEGIN ', 'DO BEGIN '],
  ['SQLScript statements', ['hana'], 'SELECT 1 FROM DUMMY; ', 'DO BEGIN ', 'END'],
  ['CASE', ALL, 'CASE ', 'SELECT '],
  ['EXPLAIN', ALL, 'EXPLAIN ', '', 'SELECT 1'],
  ['non-ASCII', ALL, 'é', 'SELECT '],
  ['astral characters', ALL, '😀', 'SELECT '],
  ['whitespace', ALL, ' ', 'SELECT 1'],
  ['carriage returns', ALL, '\r', 'SELECT 1'],
  ['NUL in a string', ALL, '\0', "SELECT '", "'"],
];

/** Nesting: [name, engines, (depth) => sql]; the depth doubles until the text passes 1 MB. */
const quoteOnce = (sql) => `'${sql.replaceAll("'", "''")}'`;
const NESTS = [
  ['query_to_xml in $tN$ quotes', ['postgres'], (d) => nestSql(d, 1, (inner, n) => `$t${n}$${inner}$t${n}$`)],
  ['query_to_xml in $$ tags reused', ['postgres'], (d) => nestSql(d, 1, (inner, n) => `$${'a'.repeat(n)}$${inner}$${'a'.repeat(n)}$`)],
  ["query_to_xml in '' strings", ['postgres'], (d) => nestSql(d, 1, quoteOnce)],
  [
    "query_to_xml in E'' strings",
    ['postgres'],
    (d) => nestSql(d, 1, (inner) => `E'${inner.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`),
  ],
  ['query_to_xml x2 per level', ['postgres'], (d) => nestSql(d, 2, (inner, n) => `$t${n}$${inner}$t${n}$`)],
  ['query_to_xml x4 per level', ['postgres'], (d) => nestSql(d, 4, (inner, n) => `$t${n}$${inner}$t${n}$`)],
  ['query_to_xml x16 per level', ['postgres'], (d) => nestSql(d, 16, (inner, n) => `$t${n}$${inner}$t${n}$`)],
  ['query_to_xml x64 per level', ['postgres'], (d) => nestSql(d, 64, (inner, n) => `$t${n}$${inner}$t${n}$`)],
  ['query_to_xml x256 per level', ['postgres'], (d) => nestSql(d, 256, (inner, n) => `$t${n}$${inner}$t${n}$`)],
  ['query_to_xml, fat leaf', ['postgres'], (d) => nestSqlLeaf(d, `SELECT ${'1,'.repeat(4000)}1`)],
  ['query_to_xml, fat backslash leaf', ['postgres'], (d) => nestSqlLeaf(d, `SELECT ${"'\\\\',".repeat(2000)}1`)],
  ['nested block comments', ALL, (d) => `SELECT 1 ${'/*'.repeat(d)}x${'*/'.repeat(d)}`],
  ['nested parentheses', ALL, (d) => `SELECT ${'('.repeat(d)}1${')'.repeat(d)}`],
  ['nested subqueries', ALL, (d) => `SELECT ${'(SELECT '.repeat(d)}1${')'.repeat(d)}`],
  ['nested function calls', ALL, (d) => `SELECT ${'f('.repeat(d)}1${')'.repeat(d)}`],
  ['nested CASE', ALL, (d) => `SELECT ${'CASE WHEN 1=1 THEN '.repeat(d)}1${' END'.repeat(d)}`],
  ['nested ARRAY', ['postgres'], (d) => `SELECT ${'ARRAY['.repeat(d)}1${']'.repeat(d)}`],
  ['nested executable comments', ['mysql'], (d) => `SELECT ${'/*!50000 '.repeat(d)}1${'*/'.repeat(d)}`],
  ['nested SQLScript blocks', ['hana'], (d) => `DO BEGIN ${'BEGIN '.repeat(d)}SELECT 1 FROM DUMMY;${' END;'.repeat(d)} END`],
  ['nested EXPLAIN', ALL, (d) => `${'EXPLAIN '.repeat(d)}SELECT 1`],
  ['nested WITH', ALL, (d) => `${'WITH a AS ('.repeat(d)}SELECT 1${') SELECT 1'.repeat(d)}`],
  ['nested unary minus', ALL, (d) => `SELECT ${'-'.repeat(d)}1`],
  ['nested NOT', ALL, (d) => `SELECT ${'NOT '.repeat(d)}TRUE`],
];

/** `width` calls of query_to_xml per level, `depth` levels, each level's text quoted by `quote(inner, level)`. */
function nestSql(depth, width, quote) {
  let sql = "SELECT '\\'";
  for (let n = 1; n <= depth; n++) {
    const call = `query_to_xml(${quote(sql, n)}, true, false, '')`;
    sql = `SELECT ${Array(width).fill(call).join(', ')}`;
    if (sql.length > MB) return undefined;
  }
  return sql;
}

function nestSqlLeaf(depth, leaf) {
  let sql = leaf;
  for (let n = 1; n <= depth; n++) sql = `SELECT query_to_xml($t${n}$${sql}$t${n}$, true, false, '')`;
  return sql;
}

function* inputs() {
  for (const [name, engines, unit, prefix, suffix] of RUNS) {
    for (const size of SIZES) for (const engine of engines) yield [`${name} (${size} B run)`, engine, fill(size, unit, prefix, suffix)];
  }
  for (const [name, engines, make] of NESTS) {
    for (const engine of engines) {
      let last;
      for (let d = 1; d <= 1 << 20; d = d < 8 ? d + 1 : d * 2) {
        const sql = make(d);
        if (sql === undefined || sql.length > MB) break;
        last = sql;
        yield [`${name} (depth ${d})`, engine, sql];
      }
      if (last === undefined) continue;
    }
  }
}

/** CPU and wall time of the best of three checks (after one warm-up), and the verdict. */
function measure(sql, dialect) {
  const options = { dialect, allowWrite: false };
  let verdict = checkStatement(sql, options);
  let cpu = Number.POSITIVE_INFINITY;
  let wall = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    const c = process.cpuUsage();
    verdict = checkStatement(sql, options);
    const used = process.cpuUsage(c);
    wall = Math.min(wall, performance.now() - t);
    cpu = Math.min(cpu, (used.user + used.system) / 1000);
  }
  return { cpu, wall, verdict: verdict.ok ? verdict.kind : verdict.rule };
}

const rows = [];
const load = loadavg()[0];
for (const [name, engine, rope] of inputs()) {
  if ((FILTER && !name.includes(FILTER)) || (SKIP && name.includes(SKIP))) continue;
  // A request body arrives flat, so flatten the rope repeat() built, as JSON.parse would.
  const sql = JSON.parse(JSON.stringify(rope));
  const row = { name, engine, bytes: Buffer.byteLength(sql), ...measure(sql, engine) };
  if (args.includes('--progress')) console.error(`${row.cpu.toFixed(1).padStart(8)} ms  ${engine} ${name}`);
  rows.push(row);
}
rows.sort((a, b) => b.cpu - a.cpu);
const ms = (x) => x.toFixed(1).padStart(7);
const line = (row) =>
  `${row.name.padEnd(52)} ${row.engine.padEnd(9)} ${String(row.bytes).padStart(8)} B  cpu ${ms(row.cpu)}  wall ${ms(row.wall)}  ${row.verdict}`;
console.log(
  `load average at start ${load.toFixed(2)} (${cpus().length} cores), ${rows.length} inputs; costliest first (CPU ms, best of 3):`,
);
for (const row of args.includes('--all') ? rows : rows.slice(0, TOP)) console.log(line(row));
console.log('\ncostliest 5 per engine:');
for (const engine of ALL) {
  const mine = rows.filter((row) => row.engine === engine).slice(0, 5);
  if (mine.length > 0) console.log(`  ${engine.padEnd(9)} ${mine.map((row) => `${row.cpu.toFixed(1)} ms ${row.name}`).join('; ')}`);
}
const over = rows.filter((row) => row.cpu >= BOUND_MS);
console.log(`load average at end ${loadavg()[0].toFixed(2)}`);
if (over.length === 0) {
  console.log(
    `PASS: every input judged in under ${BOUND_MS} ms of CPU (costliest ${rows[0]?.cpu.toFixed(1)} ms: ${rows[0]?.engine} ${rows[0]?.name})`,
  );
} else {
  console.log(`FAIL: ${over.length} inputs at or over ${BOUND_MS} ms of CPU:`);
  for (const row of over) console.log(`  ${line(row)}`);
}
process.exitCode = over.length === 0 ? 0 : 1;
