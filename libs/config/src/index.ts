export * from './config';
export * from './auth-settings';
export * from './warehouse-settings';
export * from './credential-settings';
