import { BRANCH_OPERATIONS } from './branch.operations';
import { CONSOLE_EXTENSIONS } from './console.extensions';
import { DATA_OPERATIONS } from './data.operations';
import { ENTERPRISE_EXTENSIONS } from './enterprise.extensions';
import { HISTORY_EXTENSIONS } from './history.extensions';
import { INDEX_OPERATIONS } from './index.operations';
import { MAINTENANCE_EXTENSIONS } from './maintenance.extensions';
import { MATERIALIZED_VIEW_OPERATIONS } from './materialized-view.operations';
import { NAMESPACE_OPERATIONS } from './namespace.operations';
import { OPERABILITY_EXTENSIONS } from './operability.extensions';
import { GRANT_EXTENSIONS } from './grants.extensions';
import { SUBSCRIPTION_EXTENSIONS } from './subscriptions.extensions';
import { Entry } from './operation';
import { TABLE_OPERATIONS } from './table.operations';
import { TABLE_VERSION_OPERATIONS } from './table-version.operations';
import { TAG_OPERATIONS } from './tag.operations';
import { TRANSACTION_OPERATIONS } from './transaction.operations';

/**
 * Every route this server answers, one entry each: the Lance spec's operations by operationId,
 * grouped in files by the spec's tags, then this server's extensions. A new route is one more
 * entry here (an extension whose handler needs Fastify's request and reply is a `rawOperation`; a
 * plugin with routes of its own is a `mount`): its route, access level and description follow.
 */
export const OPERATIONS: readonly Entry[] = [
  ...NAMESPACE_OPERATIONS,
  ...TABLE_OPERATIONS,
  ...TABLE_VERSION_OPERATIONS,
  ...DATA_OPERATIONS,
  ...INDEX_OPERATIONS,
  ...TAG_OPERATIONS,
  ...BRANCH_OPERATIONS,
  ...MATERIALIZED_VIEW_OPERATIONS,
  ...TRANSACTION_OPERATIONS,
  ...OPERABILITY_EXTENSIONS,
  ...HISTORY_EXTENSIONS,
  ...GRANT_EXTENSIONS,
  ...SUBSCRIPTION_EXTENSIONS,
  ...MAINTENANCE_EXTENSIONS,
  ...ENTERPRISE_EXTENSIONS,
  ...CONSOLE_EXTENSIONS,
];
