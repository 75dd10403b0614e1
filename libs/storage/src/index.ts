export * from './table-files';
export * from './local-files';
export * from './s3-files';
export * from './object-uri';
export * from './warehouse';
