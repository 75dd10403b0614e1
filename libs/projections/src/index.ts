export * from './catalog-projection';
export * from './projection-registry';
export * from './canonical-dump';
export * from './snapshots';
export * from './snapshot-file';
export * from './log-replay';
