export * from './config';
export * from './auth-settings';
export * from './warehouse-settings';
export * from './input-limits';
export * from './credential-settings';
