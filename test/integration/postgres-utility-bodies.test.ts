/**
 * The utility statements the walk finds at a statement's start in a SQL or PL/pgSQL text body
 * (utilityStatement), read by the walk's own SQL on the real server: each body is also created as
 * a function, so every case is one the server accepts.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utilityStatement, utilityWords } from '../../daemon/engines/postgres/postgres-utility-bodies.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('PostgreSQL text bodies: utility statements at a statement start', () => {
  let db: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
    await db.query('BEGIN');
    await db.query('CREATE TEMP TABLE t (a int PRIMARY KEY, copy int, load int, "analyze" int)');
  });
  afterAll(async () => {
    await db?.query('ROLLBACK').catch(() => undefined);
    await db?.end();
  });

  /** The word the walk finds in `body` on a connection of this mode, after the server accepted the body in `language`. */
  const find = async (language: 'sql' | 'plpgsql', body: string, readOnly = true): Promise<string | null> => {
    await db.query('SAVEPOINT s');
    try {
      await db.query(`CREATE FUNCTION pg_temp.probe() RETURNS int LANGUAGE ${language} AS ${pg.Client.prototype.escapeLiteral(body)}`);
    } finally {
      await db.query('ROLLBACK TO SAVEPOINT s');
    }
    const { rows } = await db.query(`SELECT ${utilityStatement(utilityWords(readOnly))} AS word FROM (SELECT $1::text AS prosrc) AS p`, [
      body,
    ]);
    return rows[0].word;
  };

  it.each([
    ['plpgsql', "BEGIN COPY (SELECT 'x') TO '/tmp/never'; RETURN 1; END", 'copy'],
    ['plpgsql', "BEGIN copy (SELECT 'p') TO PROGRAM 'cat > /tmp/never'; RETURN 1; END", 'copy'],
    ['sql', "COPY (SELECT 's') TO '/tmp/never'; SELECT 1", 'copy'],
    ['plpgsql', 'BEGIN ANALYZE t; RETURN 1; END', 'analyze'],
    ['plpgsql', 'BEGIN Analyse t; RETURN 1; END', 'analyse'],
    ['plpgsql', "BEGIN LOAD 'auto_explain'; RETURN 1; END", 'load'],
    ['plpgsql', 'BEGIN CHECKPOINT; RETURN 1; END', 'checkpoint'],
    ['plpgsql', 'BEGIN REINDEX TABLE t; RETURN 1; END', 'reindex'],
    ['plpgsql', 'BEGIN CLUSTER t USING t_pkey; RETURN 1; END', 'cluster'],
    ['sql', 'SELECT 1; PREPARE q AS SELECT 1; SELECT 1', 'prepare'],
    ['sql', 'DEALLOCATE ALL; SELECT 1', 'deallocate'],
    ['sql', 'DISCARD PLANS; SELECT 1', 'discard'],
    ['sql', 'LISTEN ch; SELECT 1', 'listen'],
    ['sql', 'UNLISTEN *; SELECT 1', 'unlisten'],
    ['sql', 'NOTIFY ch; SELECT 1', 'notify'],
    ['sql', 'LOCK t IN ACCESS SHARE MODE; SELECT 1', 'lock'],
    ['plpgsql', 'BEGIN IF true THEN ANALYZE t; END IF; RETURN 1; END', 'analyze'],
    ['plpgsql', 'BEGIN IF false THEN NULL; ELSE CHECKPOINT; END IF; RETURN 1; END', 'checkpoint'],
    ['plpgsql', 'BEGIN FOR i IN 1..2 LOOP ANALYZE t; END LOOP; RETURN 1; END', 'analyze'],
    ['plpgsql', 'BEGIN PERFORM 1; EXCEPTION WHEN others THEN CHECKPOINT; RETURN 1; END', 'checkpoint'],
    ['plpgsql', 'BEGIN <<l>> BEGIN ANALYZE t; END; RETURN 1; END', 'analyze'],
    ['plpgsql', 'BEGIN /* c */ -- x\n ANALYZE /* t */ t; RETURN 1; END', 'analyze'],
    // A dollar quote: read by its words alone.
    ['plpgsql', 'BEGIN PERFORM $q$ analyze $q$; RETURN 1; END', 'analyze'],
  ] as const)('finds the statement in a %s body %j', async (language, body, word) => {
    expect(await find(language, body)).toBe(word);
  });

  it.each([
    ['sql', 'SELECT copy + load + "analyze" FROM t'],
    ['sql', 'SELECT CASE WHEN true THEN copy ELSE load END FROM t'],
    ['plpgsql', 'DECLARE copy int := 1; BEGIN copy := copy + 1; RETURN copy; END'],
    ['plpgsql', 'BEGIN RETURN (SELECT count(*) FROM t WHERE load > 0); END'],
    ['plpgsql', "BEGIN RAISE NOTICE 'analyze; checkpoint'; /* ; copy */ RETURN 1; END"],
    ['plpgsql', 'BEGIN PERFORM "analyze" FROM t; RETURN 1; END'],
    ['sql', 'EXPLAIN ANALYZE SELECT 1; SELECT 1'],
  ] as const)('finds none in a %s body %j', async (language, body) => {
    expect(await find(language, body)).toBeNull();
  });

  it('looks only for what every connection refuses on a writable one', async () => {
    expect(await find('plpgsql', 'BEGIN ANALYZE t; RETURN 1; END', false)).toBeNull();
    expect(await find('plpgsql', 'BEGIN CHECKPOINT; RETURN 1; END', false)).toBeNull();
    expect(await find('plpgsql', "BEGIN COPY (SELECT 1) TO '/tmp/never'; RETURN 1; END", false)).toBe('copy');
    expect(await find('plpgsql', "BEGIN LOAD 'auto_explain'; RETURN 1; END", false)).toBe('load');
    expect(await find('sql', 'PREPARE q AS SELECT 1; SELECT 1', false)).toBe('prepare');
  });
});
