export { MysqlConnection, type MysqlConnectionDeps } from './mysql-connection.js';
export { createMysqlDriver, MysqlDriver } from './mysql-driver.js';
export { MYSQL_URL_OPTIONS, type MysqlUrlPlan, planMysqlUrl, type TlsMode } from './mysql-options.js';
export { type ServerInfo, serverInfo } from './mysql-session.js';
export { columnTypeName } from './mysql-types.js';
