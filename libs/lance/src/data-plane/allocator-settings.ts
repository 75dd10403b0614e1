const MiB = 1024 * 1024;

/**
 * glibc's allocator settings for a data-plane process, where the environment sets none of its own.
 * Lance (lancedb's native module, on the system allocator) allocates and frees buffers of megabytes
 * in every scan. By default glibc hands such memory back to the system when it is freed (a chunk
 * past the mmap threshold is unmapped; the heap is trimmed past twice the largest freed chunk), so
 * the next operation writes to fresh pages, and each fresh page costs a fault: on a virtual machine
 * that returns freed pages to its host, a vector query without an index over 400,000 rows took
 * 2.5 times as long as with the memory kept. Chunks up to 32 MiB (glibc's largest threshold) come
 * from the heap, and the heap keeps up to a quarter of the process's memory cap
 * (DATA_PLANE_MEMORY_MB) free, at most 256 MiB: a process holding three quarters of its cap after
 * an operation is replaced anyway.
 */
export function allocatorSettings(env: NodeJS.ProcessEnv, memoryBytes: number): Record<string, string> {
  const settings: Record<string, string> = {};
  if (env.MALLOC_MMAP_THRESHOLD_ === undefined) settings.MALLOC_MMAP_THRESHOLD_ = String(32 * MiB);
  if (env.MALLOC_TRIM_THRESHOLD_ === undefined) settings.MALLOC_TRIM_THRESHOLD_ = String(Math.min(256 * MiB, Math.floor(memoryBytes / 4)));
  return settings;
}
