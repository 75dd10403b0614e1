import { checkSqlExpression, sqlExpression } from './sql-expression';
import { LimitNames, MAX_NAME_LENGTH, PropertyLimits, invalidInput, propertyMapProblem } from '@app/catalog';
import { z } from 'zod';
import { inputLimits } from './input-limits';

/**
 * A JSON object of strings, checked as it arrived: zod's record would copy it into a fresh object,
 * where a `__proto__` entry silently disappears, so reserved keys and sizes are judged on the input.
 */
const boundedMap = (limits: () => PropertyLimits, names?: LimitNames) =>
  z.custom<Record<string, string>>((v) => isStringMap(v), { message: 'must be an object of string values' }).superRefine((map, ctx) => {
    const problem = propertyMapProblem(map, limits(), names);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

function isStringMap(v: unknown, orNull = false): v is Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const key in v) {
    const value = (v as Record<string, unknown>)[key];
    if (typeof value !== 'string' && !(orNull && value === null)) return false;
  }
  return true;
}

/** Properties and metadata: bounded by PROPERTIES_MAX_COUNT and PROPERTIES_MAX_BYTES. */
export const stringMap = boundedMap(() => inputLimits().properties);
/** A request's context: bounded in bytes only (with its x-lance-ctx-* headers, see RestRequest.context). */
export const contextLimits = (): PropertyLimits => ({ maxCount: Number.MAX_SAFE_INTEGER, maxBytes: inputLimits().contextMaxBytes });
export const CONTEXT_LIMIT_NAMES: LimitNames = { count: 'CONTEXT_MAX_BYTES', bytes: 'CONTEXT_MAX_BYTES' };
export const contextMap = boundedMap(contextLimits, CONTEXT_LIMIT_NAMES);
export const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const idArray = z.array(z.string());
/** A name (column, index, tag, branch) or a word-sized option: as long as any name may be. */
export const name = z.string().min(1).max(MAX_NAME_LENGTH);
const word = z.string().max(MAX_NAME_LENGTH);
/**
 * Columns Lance adds to what a scan or a search answers: a table column named as one of them makes
 * the queries that read it fail inside Lance, so a column is never added or renamed to one.
 */
const LANCE_SYSTEM_COLUMNS = ['_rowid', '_rowaddr', '_rowoffset', '_row_created_at_version', '_row_last_updated_at_version', '_distance', '_score', '_relevance_score'];
const newColumnName = name.refine((n) => !LANCE_SYSTEM_COLUMNS.includes(n), {
  message: `is a column Lance adds to query answers (${LANCE_SYSTEM_COLUMNS.join(', ')}); choose another name`,
});

/** UpdateTableFieldMetadata's maps: a null value removes the key; bounded as properties are. */
const fieldMetadata = z
  .custom<Record<string, string | null>>((v) => isStringMap(v, true), { message: 'must be an object of string or null values' })
  .superRefine((map, ctx) => {
    const problem = propertyMapProblem(map, inputLimits().properties);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** QueryTable's column_aliases: output name to SQL expression, as many as a schema may have fields. */
const columnAliases = z
  .custom<Record<string, string>>((v) => isStringMap(v), { message: 'must be an object of SQL expressions' })
  .superRefine((map, ctx) => {
    const problem = propertyMapProblem(map, { maxCount: inputLimits().arrow.maxFields, maxBytes: Number.MAX_SAFE_INTEGER }, { count: 'ARROW_MAX_FIELDS', bytes: 'ARROW_MAX_FIELDS' });
    if (problem) return void ctx.addIssue({ code: 'custom', message: problem });
    for (const [alias, expression] of Object.entries(map)) {
      if (alias.length === 0 || alias.length > MAX_NAME_LENGTH) return void ctx.addIssue({ code: 'custom', message: `alias '${alias.slice(0, 64)}' must be 1 to ${MAX_NAME_LENGTH} characters` });
      try {
        checkSqlExpression(expression, `the expression of alias '${alias}'`);
      } catch (e) {
        return void ctx.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }
  });

/** A schema's safeParse of a part of the request; one it cannot finish is refused as the request's fault (400 code 13). */
export function checkedParse<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.infer<S>> {
  try {
    return schema.safeParse(value);
  } catch (e) {
    // The schemas recurse and gather every complaint in one call's arguments: too many overflow the stack.
    if (e instanceof RangeError) throw invalidInput('invalid request: the body is too large or too complex to check; send fewer or smaller items');
    throw e;
  }
}

/** Parses a body against a schema; unknown fields pass, wrong or missing required ones are code 13. */
const OUT_OF_BOUNDS = new Set(['too_small', 'too_big', 'not_multiple_of']);
const throwStanding = (e: Error): never => {
  throw Object.assign(e, { standsBeforeLookup: true });
};
const throwAfterLookup = (e: Error): never => {
  throw e;
};

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = checkedParse(schema, body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`);
  const refusal = invalidInput(`invalid request: ${problems.join('; ')}`);
  // A number given out of its bounds (a negative version) is wrong whatever the catalog holds; a
  // field missing, of another type, or a list too short waits for the subject's lookup like every
  // other refusal of the body (as the Lance conformance contracts order them).
  const numberOutOfBounds = (i: z.core.$ZodIssue) => OUT_OF_BOUNDS.has(i.code) && ['number', 'bigint'].includes((i as { origin?: string }).origin ?? '');
  return result.error.issues.every(numberOutOfBounds) ? throwStanding(refusal) : throwAfterLookup(refusal);
}

const common = { id: idArray.nullish(), context: contextMap.nullish(), identity: z.unknown().optional() };

export const createNamespaceBody = z.object({ ...common, mode: word.nullish(), properties: stringMap.nullish() });
export const dropNamespaceBody = z.object({ ...common, mode: word.nullish(), behavior: word.nullish() });
export const plainBody = z.object({ ...common });
export const statsBody = z.object({ ...common, branch: word.nullish() });
export const declareTableBody = z.object({
  ...common,
  location: z.string().nullish(),
  properties: stringMap.nullish(),
  vend_credentials: z.boolean().nullish(),
});
export const registerTableBody = z.object({
  ...common,
  location: z.string(),
  mode: word.nullish(),
  properties: stringMap.nullish(),
});
export const describeTableBody = z.object({
  ...common,
  version: version.nullish(),
  tag: word.nullish(),
  branch: word.nullish(),
  with_table_uri: z.boolean().nullish(),
  load_detailed_metadata: z.boolean().nullish(),
  check_declared: z.boolean().nullish(),
  vend_credentials: z.boolean().nullish(),
});
export const tableExistsBody = z.object({ ...common, version: version.nullish() });
export const renameTableBody = z.object({ ...common, new_table_name: word, new_namespace_id: idArray.nullish() });
export const restoreTableBody = z.object({ ...common, version, branch: word.nullish() });

const versionEntry = {
  version,
  branch: word.nullish(),
  manifest_path: z.string().min(1),
  manifest_size: version.nullish(),
  e_tag: word.nullish(),
  metadata: stringMap.nullish(),
  naming_scheme: z.enum(['V1', 'V2']).nullish(),
};
export const createTableVersionBody = z.object({ ...common, ...versionEntry });
export const describeTableVersionBody = z.object({ ...common, version: version.nullish(), branch: word.nullish() });
const versionRange = z.object({
  start_version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  end_version: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER),
});
export const deleteTableVersionsBody = z.object({ ...common, branch: word.nullish(), ranges: z.array(versionRange) });
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

const statusValue = word;
export const alterTransactionBody = z.object({
  ...common,
  actions: z
    .array(
      z.object({
        setStatusAction: z.object({ status: statusValue }).nullish(),
        setPropertyAction: z.object({ key: name, value: z.string(), mode: word.nullish() }).nullish(),
        unsetPropertyAction: z.object({ key: name, mode: word.nullish() }).nullish(),
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

export const countRowsBody = z.object({ ...common, version: version.nullish(), branch: word.nullish(), predicate: sqlExpression('predicate').nullish() });

const matchQuery = z.object({
  terms: z.string(),
  column: name.nullish().transform((v) => v ?? undefined),
  boost: z.number().nullish().transform((v) => v ?? undefined),
  fuzziness: z.number().int().min(0).nullish().transform((v) => v ?? undefined),
  max_expansions: z.number().int().min(0).nullish().transform((v) => v ?? undefined),
  operator: word.nullish().transform((v) => v ?? undefined),
  prefix_length: z.number().int().min(0).nullish().transform((v) => v ?? undefined),
});
type FtsQueryShape = {
  match?: z.infer<typeof matchQuery>;
  phrase?: { terms: string; column?: string; slop?: number };
  boost?: { positive: FtsQueryShape; negative: FtsQueryShape; negative_boost?: number };
  multi_match?: { match_queries: z.infer<typeof matchQuery>[] };
  boolean?: { must: FtsQueryShape[]; must_not: FtsQueryShape[]; should: FtsQueryShape[] };
};
const ftsQuery: z.ZodType<FtsQueryShape> = z.lazy(() =>
  z.object({
    match: matchQuery.optional(),
    phrase: z.object({ terms: z.string(), column: name.optional(), slop: z.number().int().min(0).optional() }).optional(),
    boost: z.object({ positive: ftsQuery, negative: ftsQuery, negative_boost: z.number().optional() }).optional(),
    multi_match: z.object({ match_queries: z.array(matchQuery) }).optional(),
    boolean: z.object({ must: z.array(ftsQuery), must_not: z.array(ftsQuery), should: z.array(ftsQuery) }).optional(),
  }),
);

/**
 * A query vector: finite numbers, checked in one pass. Element by element through zod, a 64-d
 * vector was the larger part of validating a whole query body (about 0.1 ms of a query's 0.6 ms
 * overhead). An empty one is how lancedb's clients say "no vector search" (its namespace client
 * sends `single_vector: []` with every plain query, its remote client `"vector": []` with a full-text
 * search), so it stays allowed there; an empty vector inside `multi_vector` means nothing and is refused.
 */
const numbers = z.custom<number[]>((v) => Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isFinite(x)), {
  message: 'must be an array of finite numbers',
});
const vectors = z.array(numbers).refine((vs) => vs.every((v) => v.length > 0), { message: 'every vector of multi_vector must hold at least one number' });

const MAX_K = 100_000;
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const queryTableBody = z.object({
  ...common,
  branch: word.nullish(),
  version: version.nullish(),
  vector: z
    .union([
      z
        .object({ single_vector: numbers.nullish(), multi_vector: vectors.nullish() })
        .refine((v) => v.single_vector == null || v.multi_vector == null, {
          message: 'give one of vector.single_vector and vector.multi_vector, not both',
        }),
      numbers.transform((v) => ({ single_vector: v, multi_vector: undefined })),
    ])
    .nullish()
    .transform((v) => (v ? { single_vector: v.single_vector ?? undefined, multi_vector: v.multi_vector ?? undefined } : undefined)),
  vector_column: name.nullish(),
  k: z.number().int().min(0, 'k must be at least 0').max(MAX_K, `k must be at most ${MAX_K}`),
  offset: count.nullish(),
  filter: sqlExpression('filter').nullish(),
  prefilter: z.boolean().nullish(),
  columns: z
    .object({ column_names: z.array(name).nullish(), column_aliases: columnAliases.nullish() })
    .nullish()
    .transform((c) => (c ? { column_names: c.column_names ?? undefined, column_aliases: c.column_aliases ?? undefined } : undefined)),
  with_row_id: z.boolean().nullish(),
  distance_type: word.nullish(),
  nprobes: count.nullish(),
  ef: count.nullish(),
  refine_factor: count.nullish(),
  bypass_vector_index: z.boolean().nullish(),
  fast_search: z.boolean().nullish(),
  lower_bound: z.number().nullish(),
  upper_bound: z.number().nullish(),
  full_text_query: z
    .object({
      string_query: z.object({ query: z.string(), columns: z.array(name).nullish() }).nullish(),
      structured_query: z.object({ query: ftsQuery }).nullish(),
    })
    .refine((f) => !(f.string_query && f.structured_query), { message: 'give string_query or structured_query, not both' })
    .nullish()
    .transform((f) =>
      f
        ? {
            string_query: f.string_query ? { query: f.string_query.query, columns: f.string_query.columns ?? undefined } : undefined,
            structured_query: f.structured_query ?? undefined,
          }
        : undefined,
    ),
});

const positive = z.number().int().min(1).max(1_000_000_000);
export const createIndexBody = z.object({
  ...common,
  branch: word.nullish(),
  column: name,
  index_type: name,
  name: name.nullish(),
  distance_type: word.nullish(),
  num_partitions: positive.nullish(),
  num_sub_vectors: positive.nullish(),
  num_bits: positive.nullish(),
  sample_rate: positive.nullish(),
  max_iterations: positive.nullish(),
  target_partition_size: positive.nullish(),
  m: positive.nullish(),
  ef_construction: positive.nullish(),
  with_position: z.boolean().nullish(),
  base_tokenizer: word.nullish(),
  language: word.nullish(),
  max_token_length: positive.nullish(),
  lower_case: z.boolean().nullish(),
  stem: z.boolean().nullish(),
  remove_stop_words: z.boolean().nullish(),
  ascii_folding: z.boolean().nullish(),
});
export const listIndicesBody = z.object({
  ...common,
  version: version.nullish(),
  branch: word.nullish(),
  page_token: z.string().nullish(),
  limit: positive.nullish(),
});
export const indexNameBody = z.object({ ...common, version: version.nullish(), branch: word.nullish(), index_name: word.nullish() });

export const updateBody = z.object({
  ...common,
  branch: word.nullish(),
  predicate: sqlExpression('predicate').nullish(),
  updates: z.array(z.tuple([name, sqlExpression('updates value').pipe(z.string().min(1))])).min(1),
  properties: stringMap.nullish(),
});
export const deleteBody = z.object({ ...common, branch: word.nullish(), predicate: sqlExpression('predicate') });
export const addColumnsBody = z.object({
  ...common,
  branch: word.nullish(),
  new_columns: z
    .array(z.object({ name: newColumnName, expression: sqlExpression('expression').nullish(), computed: sqlExpression('computed').nullish(), virtual_column: z.object({}).passthrough().nullish() }))
    .min(1),
});
const tuning = z.number().nullish();
export const backfillColumnBody = z.object({
  ...common,
  branch: word.nullish(),
  column: name,
  where: sqlExpression('where').nullish(),
  // How a distributed job is cut up: one worker job here, so these change nothing.
  concurrency: tuning,
  intra_applier_concurrency: tuning,
  min_checkpoint_size: tuning,
  max_checkpoint_size: tuning,
  batch_checkpoint_flush_interval_seconds: tuning,
  task_size: tuning,
  num_frags: tuning,
  checkpoint_size: tuning,
  commit_granularity: tuning,
  read_version: z.number().int().nullish(),
  cluster: z.string().nullish(),
  manifest: z.string().nullish(),
});
export const alterColumnsBody = z.object({
  ...common,
  branch: word.nullish(),
  alterations: z
    .array(
      z.object({
        path: name,
        rename: newColumnName.nullish(),
        nullable: z.boolean().nullish(),
        data_type: z.union([name, z.object({ type: name })]).nullish(),
        virtual_column: z.object({}).passthrough().nullish(),
      }),
    )
    .min(1)
    // Lance would apply them in turn, the last one winning without a word.
    .refine((alterations) => new Set(alterations.map((a) => a.path)).size === alterations.length, { message: 'names a column more than once; give one alteration per column' }),
});
export const dropColumnsBody = z.object({ ...common, branch: word.nullish(), columns: z.array(name).min(1) });
export const updateFieldMetadataBody = z.object({
  ...common,
  branch: word.nullish(),
  updates: z.array(z.object({ path: name, metadata: fieldMetadata, replace: z.boolean().nullish() })).min(1),
});
export const pagedListBody = z.object({ ...common, page_token: z.string().nullish(), limit: z.number().int().min(1).nullish() });
/** ListTableVersions: its paging travels in the query, as the binding says, or in the body, as the request model has it. */
export const listTableVersionsBody = pagedListBody.extend({ branch: word.nullish(), descending: z.boolean().nullish() });
export const tagBody = z.object({ ...common, tag: name });
export const tagVersionBody = z.object({ ...common, tag: name, version, branch: word.nullish() });
export const explainPlanBody = z.object({ ...common, branch: word.nullish(), query: queryTableBody, verbose: z.boolean().nullish() });

export const createMaterializedViewBody = z.object({
  ...common,
  kind: z.enum(['query', 'udtf', 'chunker']),
  source_query: z.string().min(1),
  output_schema: z.string().min(1),
  udtf_spec: z.unknown().nullish(),
  with_no_data: z.boolean().nullish(),
  auto_refresh: z.boolean().nullish(),
});
export const refreshMaterializedViewBody = z.object({
  ...common,
  src_version: z.number().int().min(0).nullish(),
  // How a distributed refresh is cut up: one worker job here, so these change nothing.
  max_rows_per_fragment: z.number().nullish(),
  concurrency: z.number().nullish(),
  intra_applier_concurrency: z.number().nullish(),
  source_task_size: z.number().nullish(),
  cluster: z.string().nullish(),
  output_limit: z.number().nullish(),
  manifest: z.string().nullish(),
});

export const createBranchBody = z.object({
  ...common,
  name,
  from_branch: word.nullish(),
  from_version: version.nullish(),
});
export const deleteBranchBody = z.object({ ...common, name });

export const maintenanceBody = z.object({ ...common, branch: word.nullish() });
export const expireVersionsBody = z.object({
  ...common,
  branch: word.nullish(),
  older_than_seconds: z.number().int().min(0).max(100 * 365 * 86_400).nullish(),
  keep_last: z.number().int().min(1).max(1_000_000_000).nullish(),
});

const grantLevel = z.enum(['read', 'write', 'admin']);
const grantId = z.array(name).min(1).max(64);
const grantee = z.union([z.object({ principal: z.string().min(1).max(128) }).strict(), z.object({ role: z.string().min(1).max(128) }).strict()]);
const securable = z.union([
  z.object({ database: z.literal(true) }).strict(),
  z.object({ namespace: grantId }).strict(),
  z.object({ table: grantId }).strict(),
]);
export const grantBody = z.object({ ...common, grantee, securable, level: grantLevel });
export const checkGrantBody = z
  .object({
    ...common,
    principal: z.string().min(1).max(128),
    roles: z.array(z.string().min(1).max(128)).max(64).nullish(),
    table: grantId.nullish(),
    namespace: z.array(name).max(64).nullish(),
    at: z.string().max(64).nullish(),
  })
  .refine((b) => (b.table == null) !== (b.namespace == null), { message: 'name exactly one of table and namespace' });

/** The subscriptions routes name the database, never a namespace or table: an `id` in their body is a mistake. */
const databaseOnly = { ...common, id: z.array(z.string()).max(0, 'the subscriptions routes take no id: a subscription belongs to the database').nullish() };
export const createSubscriptionBody = z.object({
  ...databaseOnly,
  url: z.string().min(1).max(2048),
  event_types: z.array(z.string().min(1).max(128)).min(1).max(64).nullish(),
  namespace: z.array(name).min(1).max(64).nullish(),
  from_revision: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullish(),
});
export const subscriptionIdBody = z.object({ ...databaseOnly, subscription_id: z.string().min(1).max(128) });
export const listSubscriptionsBody = z.object({ ...databaseOnly });
