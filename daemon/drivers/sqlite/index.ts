export { createSqliteDriver } from './sqlite-driver.js';
export { SqliteConnection } from './sqlite-connection.js';
