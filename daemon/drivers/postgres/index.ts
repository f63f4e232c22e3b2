export { createPostgresDriver, pgConfig } from './postgres-driver.js';
export { PostgresConnection } from './postgres-connection.js';
