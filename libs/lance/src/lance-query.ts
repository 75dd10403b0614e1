import * as lancedb from '@lancedb/lancedb';
import { invalidInput } from '@app/catalog';

export interface FtsQueryJson {
  match?: MatchQueryJson;
  phrase?: { terms: string; column?: string; slop?: number };
  boost?: { positive: FtsQueryJson; negative: FtsQueryJson; negative_boost?: number };
  multi_match?: { match_queries: MatchQueryJson[] };
  boolean?: { must: FtsQueryJson[]; must_not: FtsQueryJson[]; should: FtsQueryJson[] };
}

interface MatchQueryJson {
  terms: string;
  column?: string;
  boost?: number;
  fuzziness?: number;
  max_expansions?: number;
  operator?: string;
  prefix_length?: number;
}

/** The QueryTable request, as the protocol names its fields. */
export interface TableQuery {
  vector?: { single_vector?: number[]; multi_vector?: number[][] };
  vector_column?: string;
  k: number;
  offset?: number;
  filter?: string;
  prefilter?: boolean;
  columns?: { column_names?: string[]; column_aliases?: Record<string, string> };
  with_row_id?: boolean;
  distance_type?: string;
  nprobes?: number;
  ef?: number;
  refine_factor?: number;
  bypass_vector_index?: boolean;
  fast_search?: boolean;
  lower_bound?: number;
  upper_bound?: number;
  full_text_query?: { string_query?: { query: string; columns?: string[] }; structured_query?: { query: FtsQueryJson } };
}

const DISTANCE_TYPES = ['l2', 'cosine', 'dot'] as const;

/** Translates a protocol query into a Lance query on an open table. */
export function buildLanceQuery(table: lancedb.Table, q: TableQuery): lancedb.Query | lancedb.VectorQuery {
  const vectors = q.vector?.multi_vector?.length ? q.vector.multi_vector : q.vector?.single_vector?.length ? [q.vector.single_vector] : [];
  let query: lancedb.Query | lancedb.VectorQuery;
  if (vectors.length) {
    let vq = table.query().nearestTo(vectors[0]);
    for (const extra of vectors.slice(1)) vq = vq.addQueryVector(extra);
    if (q.vector_column) vq = vq.column(q.vector_column);
    if (q.distance_type) {
      const d = q.distance_type.toLowerCase();
      if (!DISTANCE_TYPES.includes(d as (typeof DISTANCE_TYPES)[number])) {
        throw invalidInput(`distance_type '${q.distance_type}' is not one of ${DISTANCE_TYPES.join(', ')}`);
      }
      vq = vq.distanceType(d as (typeof DISTANCE_TYPES)[number]);
    }
    if (q.nprobes) vq = vq.nprobes(q.nprobes);
    if (q.ef) vq = vq.ef(q.ef);
    if (q.refine_factor) vq = vq.refineFactor(q.refine_factor);
    if (q.bypass_vector_index) vq = vq.bypassVectorIndex();
    if (q.prefilter === false) vq = vq.postfilter();
    if (q.lower_bound !== undefined || q.upper_bound !== undefined) vq = vq.distanceRange(q.lower_bound, q.upper_bound);
    query = vq;
  } else {
    query = table.query();
  }
  const fts = q.full_text_query;
  if (fts?.string_query) {
    query = query.fullTextSearch(fts.string_query.query, fts.string_query.columns?.length ? { columns: fts.string_query.columns } : {}) as typeof query;
  } else if (fts?.structured_query) {
    query = query.fullTextSearch(ftsQueryOf(fts.structured_query.query)) as typeof query;
  }
  if (q.filter) query = query.where(q.filter) as typeof query;
  if (q.columns?.column_names?.length && q.columns.column_aliases && Object.keys(q.columns.column_aliases).length) {
    throw invalidInput('columns: give column_names or column_aliases, not both');
  }
  if (q.columns?.column_names?.length) query = query.select(q.columns.column_names) as typeof query;
  else if (q.columns?.column_aliases && Object.keys(q.columns.column_aliases).length) query = query.select(q.columns.column_aliases) as typeof query;
  if (q.with_row_id) query = query.withRowId() as typeof query;
  if (q.fast_search) query = query.fastSearch() as typeof query;
  query = query.limit(q.k) as typeof query;
  if (q.offset) query = query.offset(q.offset) as typeof query;
  return query;
}

function ftsQueryOf(q: FtsQueryJson): lancedb.FullTextQuery {
  const kinds = (['match', 'phrase', 'boost', 'multi_match', 'boolean'] as const).filter((k) => q[k] !== undefined && q[k] !== null);
  if (kinds.length !== 1) throw invalidInput('a structured full-text query must set exactly one of match, phrase, boost, multi_match, boolean');
  switch (kinds[0]) {
    case 'match':
      return matchOf(q.match!);
    case 'phrase':
      return new lancedb.PhraseQuery(q.phrase!.terms, requireColumn(q.phrase!.column), { slop: q.phrase!.slop });
    case 'boost':
      return new lancedb.BoostQuery(ftsQueryOf(q.boost!.positive), ftsQueryOf(q.boost!.negative), { negativeBoost: q.boost!.negative_boost });
    case 'multi_match': {
      const queries = q.multi_match!.match_queries;
      if (!queries.length) throw invalidInput('multi_match needs at least one match query');
      return new lancedb.MultiMatchQuery(queries[0].terms, queries.map((m) => requireColumn(m.column)), {
        boosts: queries.map((m) => m.boost ?? 1),
        operator: operatorOf(queries[0].operator),
      });
    }
    case 'boolean': {
      const b = q.boolean!;
      return new lancedb.BooleanQuery([
        ...b.must.map((x) => [lancedb.Occur.Must, ftsQueryOf(x)] as [lancedb.Occur, lancedb.FullTextQuery]),
        ...b.must_not.map((x) => [lancedb.Occur.MustNot, ftsQueryOf(x)] as [lancedb.Occur, lancedb.FullTextQuery]),
        ...b.should.map((x) => [lancedb.Occur.Should, ftsQueryOf(x)] as [lancedb.Occur, lancedb.FullTextQuery]),
      ]);
    }
  }
}

function matchOf(m: MatchQueryJson): lancedb.MatchQuery {
  return new lancedb.MatchQuery(m.terms, requireColumn(m.column), {
    boost: m.boost,
    fuzziness: m.fuzziness,
    maxExpansions: m.max_expansions,
    operator: operatorOf(m.operator),
    prefixLength: m.prefix_length,
  });
}

function requireColumn(column: string | undefined): string {
  if (!column) throw invalidInput('a structured full-text query needs a column');
  return column;
}

function operatorOf(op: string | undefined): lancedb.Operator | undefined {
  if (op === undefined) return undefined;
  const s = op.toLowerCase();
  if (s === 'and') return lancedb.Operator.And;
  if (s === 'or') return lancedb.Operator.Or;
  throw invalidInput(`operator '${op}' is not And or Or`);
}
