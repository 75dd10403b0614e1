import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { CatalogError, ErrorCode, IndexType, VECTOR_INDEX_TYPES, invalidInput } from '@app/catalog';

/** CreateTableIndex options, as the protocol names them. */
export interface IndexParams {
  distance_type?: string;
  num_partitions?: number;
  num_sub_vectors?: number;
  num_bits?: number;
  sample_rate?: number;
  max_iterations?: number;
  target_partition_size?: number;
  m?: number;
  ef_construction?: number;
  with_position?: boolean;
  base_tokenizer?: string;
  language?: string;
  max_token_length?: number;
  lower_case?: boolean;
  stem?: boolean;
  remove_stop_words?: boolean;
  ascii_folding?: boolean;
}

const FTS_OPTIONS = ['with_position', 'base_tokenizer', 'language', 'max_token_length', 'lower_case', 'stem', 'remove_stop_words', 'ascii_folding'];
const ALLOWED: Record<IndexType, string[]> = {
  IVF_FLAT: ['distance_type', 'num_partitions', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_SQ: [],
  IVF_PQ: ['distance_type', 'num_partitions', 'num_sub_vectors', 'num_bits', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_HNSW_SQ: ['distance_type', 'num_partitions', 'sample_rate', 'max_iterations', 'm', 'ef_construction', 'target_partition_size'],
  IVF_HNSW_PQ: ['distance_type', 'num_partitions', 'num_sub_vectors', 'sample_rate', 'max_iterations', 'm', 'ef_construction', 'target_partition_size'],
  HNSW: ['distance_type', 'm', 'ef_construction'],
  BTREE: [],
  BITMAP: [],
  LABEL_LIST: [],
  FTS: FTS_OPTIONS,
};
const BASE_TOKENIZERS = ['simple', 'whitespace', 'raw', 'ngram'];
const DISTANCES = ['l2', 'cosine', 'dot'] as const;

/** Refuses options that do not belong to the index type, so a typo never silently does nothing. */
/**
 * The most each build option may ask for: a build runs on a worker every database shares, and its
 * cost grows with these (one HNSW build with an `ef_construction` of 10^9 held the next database's
 * BTREE build ten seconds on a 6,000-row table, and for hours on a large one). Each bound is far
 * above what Lance's and hnswlib's own guidance use.
 */
const MOST: Record<string, number> = {
  num_partitions: 65_536,
  num_sub_vectors: 8_192,
  num_bits: 8,
  sample_rate: 65_536,
  max_iterations: 1_000,
  target_partition_size: 1_000_000_000,
  m: 256,
  ef_construction: 10_000,
  max_token_length: 4_096,
};

export function checkIndexParams(type: IndexType, params: IndexParams): void {
  const given = Object.keys(params).filter((k) => (params as Record<string, unknown>)[k] !== undefined);
  const foreign = given.filter((k) => !ALLOWED[type].includes(k));
  if (foreign.length) throw invalidInput(`option(s) ${foreign.join(', ')} do not apply to a ${type} index`);
  if (params.distance_type && !DISTANCES.includes(params.distance_type.toLowerCase() as (typeof DISTANCES)[number])) {
    throw invalidInput(`distance_type '${params.distance_type}' is not one of ${DISTANCES.join(', ')}`);
  }
  if (params.base_tokenizer && !BASE_TOKENIZERS.includes(params.base_tokenizer)) {
    throw invalidInput(`base_tokenizer '${params.base_tokenizer}' is not one of ${BASE_TOKENIZERS.join(', ')}`);
  }
  for (const [k, most] of Object.entries(MOST)) {
    const v = (params as Record<string, unknown>)[k];
    if (v !== undefined && (!Number.isInteger(v) || (v as number) < 1)) throw invalidInput(`${k} must be a positive integer`);
    if (v !== undefined && (v as number) > most) throw invalidInput(`${k} must be at most ${most}`);
  }
  if (params.num_bits !== undefined && ![4, 8].includes(params.num_bits)) throw invalidInput('num_bits must be 4 or 8');
  if (params.num_partitions !== undefined && params.target_partition_size !== undefined) {
    throw invalidInput('give num_partitions or target_partition_size, not both: the partition size sets their number');
  }
}

/** The column must exist and hold what the index type indexes. */
export function checkIndexColumn(type: IndexType, schema: arrow.Schema, column: string): void {
  const field = schema.fields.find((f) => f.name === column);
  if (!field) throw new CatalogError(ErrorCode.TableColumnNotFound, `column '${column}' does not exist`);
  const t = field.type;
  if (arrow.DataType.isDictionary(t)) {
    throw invalidInput(`column '${column}' is dictionary-encoded (${String(t)}); Lance cannot index dictionary columns`);
  }
  const ok = (VECTOR_INDEX_TYPES as readonly string[]).includes(type)
    ? arrow.DataType.isFixedSizeList(t) && (arrow.DataType.isFloat(t.children[0].type) || arrow.DataType.isInt(t.children[0].type))
    : type === 'LABEL_LIST'
      ? arrow.DataType.isList(t)
      : type === 'FTS'
        ? arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t) || (arrow.DataType.isList(t) && arrow.DataType.isUtf8(t.children[0].type))
        : !arrow.DataType.isList(t) && !arrow.DataType.isFixedSizeList(t) && !arrow.DataType.isStruct(t) && !arrow.DataType.isMap(t) && !arrow.DataType.isNull(t);
  if (!ok) throw invalidInput(`a ${type} index cannot be built on column '${column}' of type ${String(t)}`);
}

/**
 * The Lance index configuration for a native index type. `rows`: the table's, from which a target
 * partition size makes the number of IVF partitions (lancedb takes only their number).
 */
export function lanceIndexConfig(type: IndexType, p: IndexParams, rows = 0): lancedb.Index {
  const distanceType = p.distance_type?.toLowerCase() as (typeof DISTANCES)[number] | undefined;
  const numPartitions = p.num_partitions ?? (p.target_partition_size ? Math.max(1, Math.ceil(rows / p.target_partition_size)) : undefined);
  const ivf = { distanceType, numPartitions, sampleRate: p.sample_rate, maxIterations: p.max_iterations };
  switch (type) {
    case 'IVF_FLAT':
      return lancedb.Index.ivfFlat(ivf);
    case 'IVF_PQ':
      return lancedb.Index.ivfPq({ ...ivf, numSubVectors: p.num_sub_vectors, numBits: p.num_bits });
    case 'IVF_HNSW_SQ':
      return lancedb.Index.hnswSq({ ...ivf, m: p.m, efConstruction: p.ef_construction });
    case 'IVF_HNSW_PQ':
      return lancedb.Index.hnswPq({ ...ivf, numSubVectors: p.num_sub_vectors, m: p.m, efConstruction: p.ef_construction });
    case 'BTREE':
      return lancedb.Index.btree();
    case 'BITMAP':
      return lancedb.Index.bitmap();
    case 'LABEL_LIST':
      return lancedb.Index.labelList();
    case 'FTS':
      return lancedb.Index.fts({
        withPosition: p.with_position,
        baseTokenizer: p.base_tokenizer as lancedb.FtsOptions['baseTokenizer'],
        language: p.language,
        maxTokenLength: p.max_token_length,
        lowercase: p.lower_case,
        stem: p.stem,
        removeStopWords: p.remove_stop_words,
        asciiFolding: p.ascii_folding,
      });
    default:
      throw new CatalogError(ErrorCode.Unsupported, `${type} is not a Lance-native index type`);
  }
}
