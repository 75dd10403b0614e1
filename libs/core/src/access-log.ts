import pino, { Logger } from 'pino';

export type AccessLogMode = 'all' | 'errors' | 'off';

export interface AccessEntry {
  id: string;
  method: string;
  url: string;
  status: number;
  ms: number;
}

/**
 * One JSON line per finished request, in the same shape pino gives every other line. Formatted
 * here rather than through a logger call because it is written for every request: pino's object
 * serialisation and a child logger per request cost about 10 µs, a third of what a whole catalog
 * read costs. `errors` keeps only answers with status 400 and above.
 */
export function accessLog(logger: Logger, mode: AccessLogMode): (entry: AccessEntry) => void {
  if (mode === 'off' || !logger.isLevelEnabled('info')) return () => undefined;
  const stream = (logger as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym];
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const prefix = `{"level":${pino.levels.values.info},"time":`;
  const minimum = mode === 'errors' ? 400 : 0;
  return (e) => {
    if (e.status < minimum) return;
    stream.write(
      `${prefix}${Date.now()}${bindings ? `,${bindings}` : ''},"reqId":${JSON.stringify(e.id)},"req":{"method":"${e.method}","url":${JSON.stringify(e.url)}},"res":{"statusCode":${e.status}},"responseTime":${e.ms},"msg":"request completed"}\n`,
    );
  };
}
