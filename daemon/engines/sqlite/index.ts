export { SqliteConnection, type SqliteOpenOptions } from './sqlite-connection.js';
export { createSqliteDriver } from './sqlite-driver.js';
