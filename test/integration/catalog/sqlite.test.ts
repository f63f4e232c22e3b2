import Database from 'better-sqlite3-multiple-ciphers';
import { afterAll, beforeAll, describe } from 'vitest';
import { runCatalogSuite } from './catalog-suite.js';
import { createHarness, type Harness } from './harness.js';
import { createSqliteFixture } from './sqlite-fixture.js';

let harness: Harness;
let file: string;

/** SQLite has no stored routines and keeps no row estimates or comments: the suite expects none. */
describe('catalog on SQLite files', () => {
  beforeAll(async () => {
    harness = await createHarness();
    const files = createSqliteFixture(harness.dir);
    file = files.file;
    await harness.add('lite', `sqlite:${file}`);
    await harness.add('lite-big', `sqlite:${files.bigFile}`);
  });
  afterAll(async () => harness?.close());

  runCatalogSuite({
    harness: () => harness,
    connection: 'lite',
    schema: 'main',
    bigConnection: 'lite-big',
    bigSchema: 'main',
    routines: {},
    rowEstimates: false,
    comments: false,
    heavySql: 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) SELECT COUNT(*) FROM n',
    canaryRows: async () => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM canary').get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
  });
});
