export * from './access';
export * from './api-keys';
export * from './authenticator';
export * from './jwt-verifier';
export * from './scopes';
