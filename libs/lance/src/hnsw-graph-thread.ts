import { HierarchicalNSW } from 'hnswlib-node';
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { GraphBuild } from './hnsw-graph-build';

/**
 * The body of the thread that builds an HNSW graph (see buildGraphOffThread): hnswlib's build is
 * synchronous and takes minutes on a large table, which on the event loop would hold every request
 * and the job's lock renewal for that long.
 */
const build = workerData as GraphBuild;
const stopped = () => build.stop !== undefined && Atomics.load(build.stop, 0) === 1;
const graph = new HierarchicalNSW(build.meta.space, build.meta.dim);
graph.initIndex(Math.max(1, build.rowIds.length), build.meta.m, build.meta.efConstruction);
const { dim } = build.meta;
for (let i = 0; i < build.rowIds.length && !stopped(); i++) graph.addPoint(Array.from(build.vectors.subarray(i * dim, (i + 1) * dim)), i);
// Each file is checked for a stop before it is written: the caller removes them once the thread has ended.
if (!stopped()) graph.writeIndexSync(build.graphFile);
if (!stopped()) writeFileSync(build.rowIdsFile, new Uint8Array(build.rowIds.buffer, build.rowIds.byteOffset, build.rowIds.byteLength));
if (!stopped()) {
  writeFileSync(build.metaFile, JSON.stringify({ ...build.meta, rows: build.rowIds.length }));
  parentPort!.postMessage('written');
}
