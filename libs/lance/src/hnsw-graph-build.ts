import * as arrow from 'apache-arrow';
import type { SpaceName } from 'hnswlib-node';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';

/** What the build thread needs: the vectors row after row, their row ids, and where to write. */
export interface GraphBuild {
  meta: { column: string; space: SpaceName; dim: number; m: number; efConstruction: number; tableVersion: number };
  vectors: Float32Array;
  rowIds: BigUint64Array;
  graphFile: string;
  rowIdsFile: string;
  metaFile: string;
  /** Set to 1 to stop the build: the thread looks at it between points and before writing. */
  stop?: Int32Array;
}

/**
 * Builds the graph and writes its three files in a worker thread; resolves once all are written.
 * The vectors and row ids are moved to the thread, not copied. Aborting `signal` asks the thread
 * to stop, and rejects once it has: after the point it is adding, or after the file it is writing,
 * so no write of it lands after the caller has cleaned up. The thread is not terminated from
 * outside: ended inside an hnswlib call, the addon's error on return aborted the whole process.
 */
export function buildGraphOffThread(build: GraphBuild, signal?: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) return fail(new Error('the HNSW build was stopped before it started'));
    const stopFlag = new Int32Array(new SharedArrayBuffer(4));
    const thread = new Worker(join(__dirname, 'hnsw-graph-thread.js'), {
      workerData: { ...build, stop: stopFlag },
      transferList: [build.vectors.buffer as ArrayBuffer, build.rowIds.buffer as ArrayBuffer],
    });
    const stop = () => Atomics.store(stopFlag, 0, 1);
    signal?.addEventListener('abort', stop, { once: true });
    let written = false;
    let failure: Error | undefined;
    thread.once('message', () => (written = true));
    thread.once('error', (e) => (failure = e));
    thread.once('exit', (code) => {
      signal?.removeEventListener('abort', stop);
      if (signal?.aborted) fail(new Error('the HNSW build was stopped'));
      else if (written) done();
      else fail(failure ?? new Error(`the HNSW build thread stopped (exit code ${code}) before writing the graph`));
    });
  });
}

/**
 * A FixedSizeList column of floats as one Float32Array, row after row; the event loop gets a turn
 * between record batches. Float16 and other element types are converted value by value.
 */
export async function packedVectors(column: arrow.Vector, dim: number): Promise<Float32Array> {
  const out = new Float32Array(column.length * dim);
  let row = 0;
  for (const chunk of column.data) {
    // arrow-js slices a FixedSizeList's child with it: the child holds exactly this chunk's values.
    const child = arrow.makeVector(chunk.children[0]);
    out.set(child.type instanceof arrow.Float && child.type.precision !== arrow.Precision.HALF ? child.toArray() : Float32Array.from(child), row * dim);
    row += chunk.length;
    await nextTurn();
  }
  return out;
}
