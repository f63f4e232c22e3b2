// The engines the benchmark measures against: admin connections, fixtures it creates and
// drops, and a sampler of how many server connections a contender holds.
import mysql from 'mysql2/promise';
import pg from 'pg';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A PostgreSQL client for the benchmark's own bookkeeping (never a contender). */
export async function pgAdmin(url, cleanup) {
  const client = new pg.Client({ connectionString: url, application_name: 'hanactl-bench-admin', connectionTimeoutMillis: 5000 });
  await client.connect();
  cleanup.add('close the PostgreSQL admin client', () => client.end());
  return {
    client,
    async version() {
      return (await client.query('SHOW server_version')).rows[0].server_version;
    },
    /** Server connections whose application_name is `name`. */
    async count(name) {
      return (await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [name])).rows[0].n;
    },
  };
}

/**
 * A MariaDB/MySQL connection for bookkeeping, and one private database per contender
 * (`names`), dropped at the end: PROCESSLIST shows no program name, but it shows the database.
 */
export async function mysqlAdmin(url, names, cleanup) {
  const u = new URL(url);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password) || undefined,
    connectTimeout: 5000,
  });
  cleanup.add('close the MariaDB admin connection', () => conn.end());
  const user = decodeURIComponent(u.username);
  const databases = {};
  for (const [key, dbName] of Object.entries(names)) {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${dbName}\``);
    cleanup.add(`drop database ${dbName}`, () => conn.query(`DROP DATABASE IF EXISTS \`${dbName}\``));
    const target = new URL(u);
    target.pathname = `/${dbName}`;
    databases[key] = {
      /** The URL of this contender's database. */
      url: target.toString(),
      /** Server connections of the user in this database (the admin connection has none selected). */
      async count() {
        const [rows] = await conn.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ? AND DB = ?', [
          user,
          dbName,
        ]);
        return Number(rows[0].n);
      },
    };
  }
  return {
    databases,
    async version() {
      const [rows] = await conn.query('SELECT VERSION() AS v');
      return rows[0].v;
    },
  };
}

/**
 * Counts connections every `intervalMs` until stopped; `stop()` returns the peak and the
 * number of samples. A slow count delays the next sample rather than overlapping it.
 */
export function samplePeak(count, intervalMs = 20) {
  let peak = 0;
  let samples = 0;
  let running = true;
  let failure;
  const loop = (async () => {
    while (running) {
      try {
        peak = Math.max(peak, await count());
        samples++;
      } catch (err) {
        failure = err;
        return;
      }
      await sleep(intervalMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      if (failure) throw failure;
      return { peak, samples };
    },
  };
}

/** Creates an UNLOGGED table of `rows` rows (id, payload) and registers its drop. */
export async function createBigTable(admin, table, rows, cleanup) {
  cleanup.add(`drop table ${table}`, () => admin.client.query(`DROP TABLE IF EXISTS ${table}`));
  await admin.client.query(`CREATE UNLOGGED TABLE ${table} AS SELECT g AS id, md5(g::text) AS payload FROM generate_series(1, ${rows}) g`);
  await admin.client.query(`ANALYZE ${table}`);
}
