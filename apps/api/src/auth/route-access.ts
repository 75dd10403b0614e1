import type { AccessLevel } from '@app/auth';

/**
 * What a route needs. `public`: no credentials (probes, the API description); `any-database`: a
 * credential with any level on any database (metrics, which tell of every database); `admin-all`:
 * admin on every database.
 */
export type RouteAccess = AccessLevel | 'public' | 'any-database' | 'admin-all';
