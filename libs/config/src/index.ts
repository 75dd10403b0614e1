export * from './config';
export * from './auth-settings';
