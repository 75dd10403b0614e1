import { CatalogError, ErrorCode } from './errors';
import { CatalogEvent, MaintenanceKind, Properties } from './events';
import { ObjectId } from './ids';
import { CatalogView } from './catalog-view';
import { TableState } from './table-state';
import { findLine, requireLine } from './table-line';
import { requireTable } from './table-commands';
import { requireManaged } from './version-commands';

export type { MaintenanceKind };
export const MAINTENANCE_KINDS: readonly MaintenanceKind[] = ['compact', 'expire_versions', 'optimize_indices'];

/** When the planner asks for each job, as the policy in force for one table says. */
export interface MaintenancePolicy {
  compact: boolean;
  /** Compact when the latest version has more fragments than this... */
  compactMaxFragments: number;
  /** ...or more small fragments (fewer rows than `smallFragmentRows`) than this. */
  compactMaxSmallFragments: number;
  smallFragmentRows: number;
  optimizeIndices: boolean;
  /** Optimise indexes when more rows than this are not in them... */
  maxUnindexedRows: number;
  /** ...or when rows written since an HNSW graph's build are more than this share (percent) of the table: the graph is built again. */
  hnswRebuildPercent: number;
  /** Expire versions older than this (absent: no age rule)... */
  expireOlderThanSeconds?: number;
  /** ...and beyond the last this many (absent: no count rule). Expiry is off while both are absent. */
  expireKeepLast?: number;
}

/** The properties that set a policy, on a table or on any namespace above it (the nearest wins). */
export const MAINTENANCE_PROPERTIES = {
  compact: 'maintenance.compact',
  compactMaxFragments: 'maintenance.compact.max_fragments',
  compactMaxSmallFragments: 'maintenance.compact.max_small_fragments',
  smallFragmentRows: 'maintenance.compact.small_fragment_rows',
  optimizeIndices: 'maintenance.optimize_indices',
  maxUnindexedRows: 'maintenance.optimize_indices.max_unindexed_rows',
  hnswRebuildPercent: 'maintenance.optimize_indices.hnsw_rebuild_percent',
  expireOlderThanSeconds: 'maintenance.expire.older_than_seconds',
  expireKeepLast: 'maintenance.expire.keep_last',
} as const satisfies Record<keyof MaintenancePolicy, string>;

/**
 * The policy in force for a table: each setting from the table's own properties, else from the
 * nearest namespace above it that sets it, else the deployment's default. A value that does not
 * parse is reported and its default used. `off` (or `none`) clears an expiry rule set higher up.
 */
export function maintenancePolicy(
  view: CatalogView,
  table: TableState,
  defaults: MaintenancePolicy,
): { policy: MaintenancePolicy; problems: string[]; expirySetBy?: string } {
  const chain: Array<{ properties: Properties; propertiesSetBy?: string }> = [table];
  for (let n = table.id.length - 1; n >= 0; n--) chain.push(view.namespace(table.id.slice(0, n)) ?? { properties: {} });
  const source = (key: string) => chain.find((p) => Object.prototype.hasOwnProperty.call(p.properties, key));
  const setting = (key: string) => source(key)?.properties[key];
  const problems: string[] = [];
  const policy = { ...defaults };
  for (const [field, key] of Object.entries(MAINTENANCE_PROPERTIES) as Array<[keyof MaintenancePolicy, string]>) {
    const raw = setting(key);
    if (raw === undefined) continue;
    const value = raw.trim().toLowerCase();
    if (field === 'compact' || field === 'optimizeIndices') {
      if (['true', 'on', '1'].includes(value)) policy[field] = true;
      else if (['false', 'off', '0'].includes(value)) policy[field] = false;
      else problems.push(`${key}: '${raw}' is not true or false`);
    } else if ((field === 'expireOlderThanSeconds' || field === 'expireKeepLast') && ['off', 'none', ''].includes(value)) {
      delete policy[field];
    } else if (/^\d+$/.test(value) && Number.isSafeInteger(Number(value)) && (field !== 'expireKeepLast' || Number(value) >= 1)) {
      policy[field] = Number(value);
    } else {
      problems.push(`${key}: '${raw}' is not a whole number${field === 'expireKeepLast' ? ' of at least 1' : ''}`);
    }
  }
  // Who the versions an expiry deletes are recorded for: whoever set the nearest rule, else the deployment.
  const rules = [MAINTENANCE_PROPERTIES.expireOlderThanSeconds, MAINTENANCE_PROPERTIES.expireKeepLast].map(source).filter((s) => s !== undefined);
  const expirySetBy = rules.length ? rules[0]!.propertiesSetBy : defaults.expireOlderThanSeconds !== undefined || defaults.expireKeepLast !== undefined ? DEPLOYMENT_POLICY : undefined;
  return { policy, problems, ...(expirySetBy !== undefined ? { expirySetBy } : {}) };
}

/** The principal an expiry by the deployment's own policy (MAINTENANCE_EXPIRE_*) is recorded for. */
export const DEPLOYMENT_POLICY = 'deployment (MAINTENANCE_EXPIRE_*)';

/** Properties that make the planner delete versions: setting one needs admin. */
export function versionDeletingProperties(properties: Properties): string[] {
  return Object.keys(properties).filter((key) => key.startsWith('maintenance.expire.'));
}

export interface ExpiryRule {
  olderThanSeconds?: number;
  keepLast?: number;
}

/**
 * The versions of a line that an expiry may remove, oldest first: never the latest, never a tagged
 * version, never one a branch starts from; a version is kept while it is younger than the age rule
 * or among the last `keepLast` (each rule that is set keeps what it names).
 */
export function expiryCandidates(table: TableState, branch: string | undefined, rule: ExpiryRule, tagged: ReadonlySet<number>, nowMillis: number): number[] {
  if (rule.olderThanSeconds === undefined && rule.keepLast === undefined) return [];
  const line = requireLine(table, branch);
  const versions = line.versions.values().sort((a, b) => a.version - b.version);
  const bases = new Set([...(table.branches?.values() ?? [])].filter((b) => b.parentBranch === branch).map((b) => b.parentVersion));
  const recent = new Set(rule.keepLast === undefined ? [] : versions.slice(-rule.keepLast).map((v) => v.version));
  const cutoff = rule.olderThanSeconds === undefined ? Infinity : nowMillis - rule.olderThanSeconds * 1000;
  return versions
    .filter((v) => v.version !== line.latestVersion && !tagged.has(v.version) && !bases.has(v.version) && !recent.has(v.version))
    .filter((v) => v.timestampMillis === undefined || v.timestampMillis < cutoff)
    .map((v) => v.version);
}

export interface RequestTableMaintenance {
  id: ObjectId;
  branch?: string;
  kind: MaintenanceKind;
  requestedBy: 'request' | 'planner';
  options?: Record<string, number>;
  /** Whether a transaction is over: a line takes one maintenance job at a time. */
  finished: (transactionId: string) => boolean;
}

/** A maintenance job for one line of a managed table with data, unless one is already queued or running there (409 code 14). */
export function decideRequestTableMaintenance(view: CatalogView, cmd: RequestTableMaintenance): CatalogEvent[] {
  const table = requireManaged(requireTable(view, cmd.id));
  const line = requireLine(table, cmd.branch);
  if (line.latestVersion === undefined) {
    throw new CatalogError(ErrorCode.InvalidTableState, 'the table holds no data yet: there is nothing to maintain');
  }
  const running = findLine(table, cmd.branch)?.maintenance;
  if (running !== undefined && !cmd.finished(running)) {
    throw new CatalogError(ErrorCode.ConcurrentModification, `a maintenance job is already queued or running on this table (transaction ${running}); follow it with DescribeTransaction`);
  }
  return [
    {
      type: 'TableMaintenanceRequested',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        kind: cmd.kind,
        ...(cmd.branch !== undefined ? { branch: cmd.branch } : {}),
        requestedBy: cmd.requestedBy,
        ...(cmd.options && Object.keys(cmd.options).length ? { options: cmd.options } : {}),
      },
    },
  ];
}
