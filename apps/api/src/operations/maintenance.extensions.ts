import { MaintenanceKind, invalidInput } from '@app/catalog';
import { expireVersionsBody, maintenanceBody } from '../http/body-schemas';
import { operation } from './operation';

/** Answers 202 with the job's transaction at once, followed with DescribeTransaction. */
const job = (extension: string, kind: MaintenanceKind, access: 'write' | 'admin', summary: string) =>
  operation({
    extension,
    doc: { tag: 'Maintenance', summary },
    method: 'POST',
    path: `/v1/table/:id/maintenance/${kind}`,
    access,
    status: 202,
    body: maintenanceBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table }, s) => s.maintenance.request(ctx, { ...table, kind }),
  });

/** Table maintenance: extensions outside the spec, each job a transaction on the table-maintenance queue. */
export const MAINTENANCE_EXTENSIONS = [
  job(
    'CompactTable',
    'compact',
    'write',
    'Queues a compaction (Lance rewrites small fragments, materialising deletions; indexes take in new rows): 202 {job_id}, a transaction to follow with DescribeTransaction. Write level.',
  ),
  job('OptimizeTableIndices', 'optimize_indices', 'write', 'Queues an index optimisation (rows written since a build are folded into the index): 202 {job_id}. Write level.'),
  /** The retention is the body's, else the policy in force; with neither there is nothing to expire. */
  operation({
    extension: 'ExpireTableVersions',
    doc: {
      tag: 'Maintenance',
      summary: 'Queues a version expiry (older_than_seconds and/or keep_last, else the policy in force; never the latest, a tagged version or a branch base): 202 {job_id}. Admin level.',
    },
    method: 'POST',
    path: '/v1/table/:id/maintenance/expire_versions',
    access: 'admin',
    status: 202,
    body: expireVersionsBody,
    subject: 'table',
    branch: 'body',
    handle: async ({ ctx, table, body }, s) => {
      const options: Record<string, number> = {};
      if (body.older_than_seconds != null) options.older_than_seconds = body.older_than_seconds;
      if (body.keep_last != null) options.keep_last = body.keep_last;
      const state = await s.maintenance.describe(ctx, table.id, table.branch);
      if (!Object.keys(options).length) {
        if (state.policy.expire_older_than_seconds !== undefined) options.older_than_seconds = state.policy.expire_older_than_seconds;
        if (state.policy.expire_keep_last !== undefined) options.keep_last = state.policy.expire_keep_last;
      }
      if (!Object.keys(options).length) {
        throw invalidInput('no retention: give older_than_seconds and/or keep_last, or set maintenance.expire.older_than_seconds / maintenance.expire.keep_last on the table or a namespace above it');
      }
      return s.maintenance.request(ctx, { ...table, kind: 'expire_versions', options });
    },
  }),
  operation({
    extension: 'DescribeTableMaintenance',
    doc: { tag: 'Maintenance', summary: "A table line's maintenance: the policy in force, its last job, its latest version's fragments. Read level." },
    method: 'POST',
    path: '/v1/table/:id/maintenance/describe',
    access: 'read',
    body: maintenanceBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table }, s) => s.maintenance.describe(ctx, table.id, table.branch),
  }),
];
