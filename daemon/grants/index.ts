export { grantRoutes } from './grant-routes.js';
export { EVERYONE, type GrantStore, GrantService, type GrantSubject, principalsOf } from './grant-service.js';
