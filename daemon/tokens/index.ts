export { hashToken, TOKEN_PREFIX, type TokenGrant, TokenService, type TokenStore } from './token-service.js';
