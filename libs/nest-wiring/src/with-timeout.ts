/** Redis calls wait for a reconnect by default; a caller that must answer now bounds the wait. */
export function withTimeout<T>(work: Promise<T>, ms: number, what = 'Redis'): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
