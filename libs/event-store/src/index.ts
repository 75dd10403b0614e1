export * from './event-store.port';
export * from './embedded/sqlite-event-store';
export * from './esdb/esdb-event-store';
export * from './create-event-store';
