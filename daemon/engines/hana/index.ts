export {
  buildHanaConnectOptions,
  HANA_URL_OPTIONS,
  type HanaConnectOptions,
  parseBooleanOption,
} from './connect-options.js';
export type {
  HanaClientModule,
  HanaColumnInfoLike,
  HanaConnectionLike,
  HanaResultSetLike,
  HanaStatementLike,
} from './hana-client-types.js';
export { HanaConnection, type HanaConnectionOptions } from './hana-connection.js';
export { createHanaDriver, HanaDriver, type HanaDriverDeps } from './hana-driver.js';
export {
  assertSessionKey,
  buildContextSet,
  buildContextStatements,
  buildContextUnset,
  PING_SQL,
  SERVER_VERSION_SQL,
  SESSION_VALUE_MAX_LENGTH,
  SET_TRANSACTION_READ_ONLY,
  SET_TRANSACTION_READ_WRITE,
  sessionValueLiteral,
} from './hana-sql.js';
export { type HanaClientLoader, importHanaClient, loadHanaClient } from './load-client.js';
