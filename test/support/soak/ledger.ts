/** What the load drivers were told was done (acknowledged) or tried, for the checker to prove. */

/** A version/create that answered 200: its manifest must be the bytes staged for it. */
export interface AckedCommit {
  table: string;
  key: string;
  version: number;
  bytes: Buffer;
}

/** A version (insert, lancedb append) the answer named: it must be listed and its manifest stored. */
export interface AckedVersion {
  table: string;
  key: string;
  version: number;
  /** Rows this write added, for the table's count. */
  rows: number;
}

/** One racing batch, whatever its answer: all of it applied or none. */
export interface BatchAttempt {
  declared: string;
  table: string;
  key: string;
  version: number;
  bytes: Buffer;
  acknowledged: boolean;
}

export class Ledger {
  readonly commits: AckedCommit[] = [];
  /** `${table} v${version}` -> how many 200s that version/create got (one winner per version). */
  readonly winners = new Map<string, number>();
  readonly versions: AckedVersion[] = [];
  /** Rows a table's writers tried to add, acknowledged or not: the most its count can be. */
  readonly attemptedRows = new Map<string, number>();
  readonly batches: BatchAttempt[] = [];
  readonly transactions: Array<{ id: string; what: string }> = [];
  readonly tags: Array<{ table: string; tag: string; version: number }> = [];
  readonly branches: Array<{ table: string; branch: string }> = [];

  won(table: string, version: number): void {
    const k = `${table} v${version}`;
    this.winners.set(k, (this.winners.get(k) ?? 0) + 1);
  }

  tried(table: string, rows: number): void {
    this.attemptedRows.set(table, (this.attemptedRows.get(table) ?? 0) + rows);
  }
}
