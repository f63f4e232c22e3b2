export { EVERYONE, GrantService, type GrantStore, type GrantSubject, principalsOf } from './grant-service.js';
