import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { HierarchicalNSW, SpaceName } from 'hnswlib-node';
import { LRUCache } from 'lru-cache';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { hnswDir, hnswFiles, invalidInput } from '@app/catalog';
import { TableFiles, isS3Uri } from '@app/storage';
import { buildGraphOffThread, packedVectors } from './hnsw-graph-build';
import { hasRowId, packedRowIds, rowIdsNotIn, sortedRowIds } from './row-id-sets';

/** What is stored beside the graph: how it was built, at which table version, over how many rows. */
export interface HnswMeta {
  column: string;
  space: SpaceName;
  dim: number;
  m: number;
  efConstruction: number;
  tableVersion: number;
  /** How many rows the graph holds; label i is the i-th row id of the `.rowids` file. */
  rows: number;
}

/** The meta file as graphs built before the `.rowids` file wrote it: row ids as decimal strings. */
type StoredMeta = Omit<HnswMeta, 'rows'> & { rows?: number; rowIds?: string[] };

export interface HnswHit {
  rowId: bigint;
  distance: number;
}

const SPACES: Record<string, SpaceName> = { l2: 'l2', cosine: 'cosine', dot: 'ip' };

/** What a build made: the table version it indexed and how many rows it holds. */
export interface HnswBuilt {
  tableVersion: number;
  indexedRows: number;
}

/**
 * The standalone HNSW index: a graph built with hnswlib-node from a table version's vectors,
 * kept beside the dataset. Rows written later are not in it; `search` covers them exactly. The
 * graph is built in a worker thread, so the process keeps answering (and renewing its job's lock)
 * however long the build takes.
 */
export async function buildHnsw(
  table: lancedb.Table,
  location: string,
  name: string,
  column: string,
  options: { files: TableFiles; distanceType?: string; m?: number; efConstruction?: number; signal?: AbortSignal },
): Promise<HnswBuilt> {
  const space = SPACES[(options.distanceType ?? 'l2').toLowerCase()];
  if (!space) throw invalidInput(`distance_type '${options.distanceType}' is not one of l2, cosine, dot`);
  const tableVersion = await table.version();
  const data = (await table.query().select([column]).withRowId().toArrow()) as unknown as arrow.Table;
  const vectors = data.getChild(column)!;
  const type = data.schema.fields.find((f) => f.name === column)!.type;
  if (!(type instanceof arrow.FixedSizeList) || !(type.valueType instanceof arrow.Float)) {
    throw invalidInput(`column '${column}' is not a fixed-size list of floats; HNSW indexes vectors`);
  }
  if (vectors.nullCount > 0) {
    throw invalidInput(`column '${column}' has ${vectors.nullCount} rows without a vector; HNSW can index only rows that have one`);
  }
  const dim = type.listSize;
  // On an object store the graph is built in a local scratch directory, then stored as objects
  // beside the table, where any process can load it.
  const scratch = isS3Uri(location) ? await mkdtemp(join(tmpdir(), 'hnsw-')) : undefined;
  const files = hnswFiles(scratch ?? location, name);
  await mkdir(hnswDir(scratch ?? location), { recursive: true });
  // Written under temporary names and renamed, so a reader never sees half an index.
  const temporary = { graphFile: `${files.graph}.tmp`, rowIdsFile: `${files.rowIds}.tmp`, metaFile: `${files.meta}.tmp` };
  try {
    try {
      const build = {
        meta: { column, space, dim, m: options.m ?? 16, efConstruction: options.efConstruction ?? 200, tableVersion },
        vectors: await packedVectors(vectors, dim),
        rowIds: packedRowIds(data.getChild('_rowid')!),
        ...temporary,
      };
      await buildGraphOffThread(build, options.signal);
    } catch (e) {
      await Promise.all(Object.values(temporary).map((path) => rm(path, { force: true })));
      throw e;
    }
    if (scratch) {
      const stored = hnswFiles(location, name);
      // The meta object last: a graph is complete once its meta is there.
      await options.files.write(stored.graph, await readFile(temporary.graphFile));
      await options.files.write(stored.rowIds, await readFile(temporary.rowIdsFile));
      await options.files.write(stored.meta, await readFile(temporary.metaFile));
    } else {
      await rename(temporary.graphFile, files.graph);
      await rename(temporary.rowIdsFile, files.rowIds);
      await rename(temporary.metaFile, files.meta);
    }
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
  return { tableVersion, indexedRows: data.numRows };
}

export interface Loaded {
  graph: HierarchicalNSW;
  meta: HnswMeta;
  /** Label i of the graph is row id labels[i]. */
  labels: BigUint64Array;
  /** The same row ids, sorted. */
  indexed: BigUint64Array;
  /** What identifies the stored graph's content: its entity tag, or its modification time. */
  stamp: string;
}

/** Row ids parsed per turn of the event loop when a graph's list of rows is loaded. */
const LABELS_PER_STEP = 100_000;

/**
 * Keeps the `capacity` most recently used graphs in memory (a graph of a million 64-d vectors
 * takes hundreds of MB); a rebuilt file, or an evicted one, is loaded again.
 */
export class HnswCache {
  private readonly loaded: LRUCache<string, Loaded>;

  constructor(
    capacity: number,
    private readonly files: TableFiles,
  ) {
    this.loaded = new LRUCache({ max: capacity });
  }

  async load(location: string, name: string): Promise<Loaded | undefined> {
    const files = hnswFiles(location, name);
    const info = await this.files.head(files.graph);
    if (!info) return undefined;
    const stamp = info.eTag ?? String(info.modifiedMillis);
    const cached = this.loaded.get(files.graph);
    if (cached && cached.stamp === stamp) return cached;
    const metaText = await this.files.read(files.meta);
    if (!metaText) return undefined;
    const { rowIds, ...stored } = JSON.parse(metaText.toString('utf8')) as StoredMeta;
    let labels: BigUint64Array;
    if (rowIds) {
      labels = new BigUint64Array(rowIds.length);
      for (let i = 0; i < rowIds.length; i++) {
        labels[i] = BigInt(rowIds[i]);
        if (i % LABELS_PER_STEP === LABELS_PER_STEP - 1) await nextTurn();
      }
    } else {
      const bytes = (await this.files.read(files.rowIds)) ?? Buffer.alloc(0);
      labels = new BigUint64Array(bytes.byteLength / 8);
      new Uint8Array(labels.buffer).set(bytes);
    }
    const meta = { ...stored, rows: labels.length };
    const graph = new HierarchicalNSW(meta.space, meta.dim);
    await readGraph(graph, this.files, files.graph);
    const entry = { graph, meta, labels, indexed: sortedRowIds(labels.slice()), stamp };
    this.loaded.set(files.graph, entry);
    return entry;
  }
}

/** hnswlib reads a graph from a file: an object is fetched into a scratch file first. */
async function readGraph(graph: HierarchicalNSW, files: TableFiles, location: string): Promise<void> {
  if (!isS3Uri(location)) {
    await graph.readIndex(location);
    return;
  }
  const scratch = await mkdtemp(join(tmpdir(), 'hnsw-load-'));
  try {
    const bytes = await files.read(location);
    if (!bytes) throw new Error(`the HNSW graph ${location} is gone`);
    await writeFile(`${scratch}/graph.bin`, bytes);
    await graph.readIndex(`${scratch}/graph.bin`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Distances the way hnswlib reports them, so graph hits and exact hits compare. */
export function distance(space: SpaceName, a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  let l2 = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
    l2 += (a[i] - b[i]) ** 2;
  }
  if (space === 'l2') return l2;
  if (space === 'ip') return 1 - dot;
  return 1 - dot / (Math.sqrt(na * nb) || 1);
}

/**
 * The row ids a table version holds. A version never changes, so its answer is cached, for the
 * `capacity` most recently queried tables (8 bytes a row each).
 */
export class LiveRows {
  private readonly cache: LRUCache<string, LiveRowIds>;

  constructor(capacity: number) {
    this.cache = new LRUCache({ max: capacity });
  }

  async of(table: lancedb.Table, location: string): Promise<LiveRowIds> {
    const version = await table.version();
    const cached = this.cache.get(location);
    if (cached && cached.version === version) return cached;
    const live = (await table.query().select([]).withRowId().toArrow()) as unknown as arrow.Table;
    const entry = { version, ids: sortedRowIds(packedRowIds(live.getChild('_rowid')!)), unindexed: new Map<string, BigUint64Array>() };
    this.cache.set(location, entry);
    return entry;
  }
}

export interface LiveRowIds {
  version: number;
  /** Sorted. */
  ids: BigUint64Array;
  /** Per loaded graph: the live rows it does not hold. */
  unindexed: Map<string, BigUint64Array>;
}

/**
 * Nearest rows to `vector`: graph candidates that still exist, plus every live row the graph does
 * not hold (written, updated or moved after the build), measured exactly. Results are complete.
 */
export async function searchHnsw(
  table: lancedb.Table,
  index: Loaded,
  live: LiveRowIds,
  vector: number[],
  wanted: number,
  ef?: number,
): Promise<{ hits: HnswHit[]; graphCandidates: number; exactRows: number }> {
  const { graph, meta, labels } = index;
  if (vector.length !== meta.dim) throw invalidInput(`the query vector has ${vector.length} dimensions; the index has ${meta.dim}`);
  const key = `${meta.tableVersion}:${index.stamp}`;
  let unindexed = live.unindexed.get(key);
  if (!unindexed) {
    unindexed = rowIdsNotIn(live.ids, index.indexed);
    live.unindexed.set(key, unindexed);
  }

  const count = graph.getCurrentCount();
  // Graph rows deleted since the build still answer searches: ask for enough to cover them.
  const dead = labels.length - (live.ids.length - unindexed.length);
  const k = Math.min(count, wanted + dead);
  graph.setEf(Math.max(ef ?? 0, k, 64));
  const found = k > 0 ? graph.searchKnn(vector, k) : { neighbors: [], distances: [] };
  const hits: HnswHit[] = [];
  found.neighbors.forEach((label, i) => {
    const rowId = labels[label];
    if (hasRowId(live.ids, rowId)) hits.push({ rowId, distance: found.distances[i] });
  });
  if (unindexed.length) {
    const rows = (await table.takeRowIds(Array.from(unindexed)).select([meta.column]).withRowId().toArrow()) as unknown as arrow.Table;
    const vectors = rows.getChild(meta.column)!;
    const ids = rows.getChild('_rowid')!;
    for (let i = 0; i < rows.numRows; i++) {
      hits.push({ rowId: BigInt(ids.get(i) as bigint), distance: distance(meta.space, vector, (vectors.get(i) as arrow.Vector).toArray() as ArrayLike<number>) });
    }
  }
  hits.sort((a, b) => a.distance - b.distance);
  return { hits: hits.slice(0, wanted), graphCandidates: found.neighbors.length, exactRows: unindexed.length };
}

export async function readHnswMeta(files: TableFiles, location: string, name: string): Promise<HnswMeta | undefined> {
  const text = await files.read(hnswFiles(location, name).meta).catch(() => undefined);
  if (!text) return undefined;
  const { rowIds, ...stored } = JSON.parse(text.toString('utf8')) as StoredMeta;
  return { ...stored, rows: stored.rows ?? rowIds?.length ?? 0 };
}

export async function removeHnsw(files: TableFiles, location: string, name: string): Promise<void> {
  const stored = hnswFiles(location, name);
  await files.remove(stored.graph);
  await files.remove(stored.rowIds);
  await files.remove(stored.meta);
}
