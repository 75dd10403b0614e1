import { CallerAccess, Properties } from '@app/catalog';

/** What every operation knows about the request that asked for it, whatever the transport. */
export interface RequestContext {
  database: string;
  /** Caller context (`x-lance-ctx-*` headers merged with the body's `context`); recorded with events. */
  context: Properties;
  delimiter: string;
  principal?: string;
  /** The server's own calls and its workers: they get the warehouse's own storage options. */
  service?: boolean;
  /**
   * The highest level the caller holds in this database (anonymous callers, without authentication
   * configured, hold admin): what the credentials vended for a table allow. Absent: read.
   */
  level?: 'read' | 'write' | 'admin';
  /**
   * Aborted when the caller leaves before its answer: a data operation it waits for stops. A
   * function, so that the many requests that never run one do not pay for a signal.
   */
  departure?: () => AbortSignal;
  /**
   * Set when grants decide what the caller may do (its credential's own level is not enough):
   * lists, histories and feeds keep only what it may read. Absent: it reads everything.
   */
  sees?: CallerAccess;
  /**
   * When the request arrived (performance.now()): its reads see the state as of a head read begun
   * after then, which a read made for an earlier step of the same request, or shared with others,
   * may already be.
   */
  arrivedAt?: number;
}
