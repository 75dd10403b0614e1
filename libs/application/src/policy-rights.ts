import { CatalogError, ErrorCode, Properties, versionDeletingProperties } from '@app/catalog';
import { RequestContext } from './request-context';

/**
 * A property that makes the maintenance planner delete versions (`maintenance.expire.*`) deletes
 * them on its setter's word, so setting one needs what deleting versions needs: admin. Without it
 * a write key could have versions deleted that it may not delete itself.
 */
export function requireRightToSetPolicy(ctx: RequestContext, properties: Properties): void {
  if (ctx.service || ctx.level === 'admin') return;
  const keys = versionDeletingProperties(properties);
  if (keys.length === 0) return;
  throw new CatalogError(
    ErrorCode.PermissionDenied,
    `${ctx.principal ?? 'this caller'} may not set ${keys.join(', ')}: the maintenance planner deletes versions by it, which needs admin on database '${ctx.database}'`,
  );
}
