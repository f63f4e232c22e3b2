// BASELINE for the benchmark, not part of hanactl: one query the way a per-call CLI
// (hana-cli and the like) runs it — start node, load the driver, connect, query, print, exit.
// A lower bound on such a tool's cost: a real CLI loads far more than `pg`.
// `node spawn-query.mjs <postgres-url> <sql>`
import pg from 'pg';

const [url, sql] = process.argv.slice(2);
const client = new pg.Client({ connectionString: url, application_name: 'hanactl-bench-spawn' });
await client.connect();
const result = await client.query(sql);
process.stdout.write(`${JSON.stringify(result.rows)}\n`);
await client.end();
