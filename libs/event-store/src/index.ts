export * from './event-store.port';
export * from './embedded/sqlite-event-store';
export * from './esdb/esdb-event-store';
export * from './create-event-store';
export * from './postgres/postgres-event-store';
export { redactedUrl } from './postgres/postgres-schema';
export * from './write-freeze';
