// `npm run test:hana`: the SAP HANA tests in one command. Without HANA_TEST_URL only the offline
// ones run (at the @sap/hana-client boundary), and it says plainly that the live ones skipped.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

// The tests run with the thread pool the hanactl entry gives the daemon (bin/thread-pool.cjs),
// so the live cancel-under-load test exercises the same sizing.
const env = { ...process.env };
createRequire(import.meta.url)('../bin/thread-pool.cjs').sizeThreadPool(env);

const live = Boolean(process.env.HANA_TEST_URL);
if (!live) {
  console.log(
    'Live SAP HANA tests SKIPPED: HANA_TEST_URL is unset, so only the offline tests run.\n' +
      "To run them: HANA_TEST_URL='hana://USER:PASSWORD@<id>.hana.<region>.hanacloud.ondemand.com:443/?encrypt=true' npm run test:hana\n" +
      '(docs/engines/hana.md: a free HANA Cloud trial instance and the privileges the test user needs).',
  );
}
const files = ['test/unit/daemon/engines/hana', 'test/drivers/hana.test.ts', 'test/integration/catalog/hana.test.ts', 'test/unit/daemon/policy/hana-sqlscript.test.ts'];
const run = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...files], { stdio: 'inherit', env });
process.exit(run.status ?? 1);
