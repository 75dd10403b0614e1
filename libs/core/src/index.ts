export * from './tokens';
export * from './config.module';
export * from './catalog.module';
export * from './bull-index-queue';
export * from './bull-query-analyzer';
