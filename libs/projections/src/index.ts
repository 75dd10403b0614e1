export * from './catalog-projection';
export * from './projection-registry';
export * from './canonical-dump';
