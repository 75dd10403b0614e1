import { invalidInput } from '@app/catalog';
import { z } from 'zod';

export const stringMap = z.record(z.string(), z.string());
export const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const idArray = z.array(z.string());

/** Parses a body against a schema; unknown fields pass, wrong or missing required ones are code 13. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`);
  throw invalidInput(`invalid request: ${problems.join('; ')}`);
}

const common = { id: idArray.nullish(), context: stringMap.nullish(), identity: z.unknown().optional() };

export const createNamespaceBody = z.object({ ...common, mode: z.string().nullish(), properties: stringMap.nullish() });
export const dropNamespaceBody = z.object({ ...common, mode: z.string().nullish(), behavior: z.string().nullish() });
export const plainBody = z.object({ ...common });
export const declareTableBody = z.object({
  ...common,
  location: z.string().nullish(),
  properties: stringMap.nullish(),
  vend_credentials: z.boolean().nullish(),
});
export const registerTableBody = z.object({
  ...common,
  location: z.string(),
  mode: z.string().nullish(),
  properties: stringMap.nullish(),
});
export const describeTableBody = z.object({
  ...common,
  version: version.nullish(),
  tag: z.string().nullish(),
  branch: z.string().nullish(),
  with_table_uri: z.boolean().nullish(),
  load_detailed_metadata: z.boolean().nullish(),
  check_declared: z.boolean().nullish(),
  vend_credentials: z.boolean().nullish(),
});
export const tableExistsBody = z.object({ ...common, version: version.nullish() });
export const renameTableBody = z.object({ ...common, new_table_name: z.string(), new_namespace_id: idArray.nullish() });
export const restoreTableBody = z.object({ ...common, version, branch: z.string().nullish() });

const versionEntry = {
  version,
  branch: z.string().nullish(),
  manifest_path: z.string().min(1),
  manifest_size: version.nullish(),
  e_tag: z.string().nullish(),
  metadata: stringMap.nullish(),
  naming_scheme: z.enum(['V1', 'V2']).nullish(),
};
export const createTableVersionBody = z.object({ ...common, ...versionEntry });
export const describeTableVersionBody = z.object({ ...common, version: version.nullish(), branch: z.string().nullish() });
const versionRange = z.object({
  start_version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  end_version: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
});
export const deleteTableVersionsBody = z.object({ ...common, branch: z.string().nullish(), ranges: z.array(versionRange) });
export const batchCreateTableVersionsBody = z.object({
  ...common,
  entries: z.array(z.object({ id: idArray, ...versionEntry })).min(1),
});
export const batchCommitTablesBody = z.object({
  ...common,
  operations: z
    .array(
      z.object({
        declare_table: declareTableBody.nullish(),
        create_table_version: createTableVersionBody.nullish(),
        delete_table_versions: deleteTableVersionsBody.nullish(),
        deregister_table: plainBody.nullish(),
      }),
    )
    .min(1),
});

const statusValue = z.string();
export const alterTransactionBody = z.object({
  ...common,
  actions: z
    .array(
      z.object({
        setStatusAction: z.object({ status: statusValue }).nullish(),
        setPropertyAction: z.object({ key: z.string().min(1), value: z.string(), mode: z.string().nullish() }).nullish(),
        unsetPropertyAction: z.object({ key: z.string().min(1), mode: z.string().nullish() }).nullish(),
      }),
    )
    .min(1),
});

/** Exactly one field of a one-of object must be set. */
export function oneOf<K extends string>(value: Partial<Record<K, unknown>>, names: readonly K[], what: string): K {
  const set = names.filter((k) => value[k] !== undefined && value[k] !== null);
  if (set.length !== 1) throw invalidInput(`${what} must set exactly one of ${names.join(', ')}`);
  return set[0];
}
