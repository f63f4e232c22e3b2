export { PostgresConnection } from './postgres-connection.js';
export { createPostgresDriver, pgConfig } from './postgres-driver.js';
