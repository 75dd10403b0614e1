export * from './warehouse';
export * from './manifest-finaliser';
export * from './disk-versions';
export * from './json-arrow-schema';
export * from './lance-tables';
export * from './manifest-stats';
export * from './arrow-ipc';
export * from './lance-query';
