export * from './queues';
export * from './redis-check';
