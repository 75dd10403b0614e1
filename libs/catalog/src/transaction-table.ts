import { TransactionStatus } from './events';
import { ObjectId, keyOf } from './ids';
import { UuidSlots } from './uuid-slots';

export interface TransactionState {
  id: string;
  status: TransactionStatus;
  operation: string;
  properties: Record<string, string>;
  /** Properties a caller set (AlterTransaction): the only ones a caller may change; the rest are the server's. */
  callerKeys?: string[];
  /** The table a job's transaction works on (queued work): what its later changes are about. */
  table?: ObjectId;
}

const STATUSES: readonly TransactionStatus[] = ['Queued', 'Running', 'Succeeded', 'Failed', 'Canceled'];
const STATUS_BITS = 0b111;
/** Its properties are not the standard pair: the whole object is kept in `detailed`. */
const DETAILED = 0b1000;
const OPERATION_SHIFT = 4;

/**
 * Every transaction of a database. Almost all of them are commits that completed when they were
 * recorded and never change again: such a transaction is held as three numbers (status and
 * operation in one, the start time in milliseconds, its id as 16 bytes in `UuidSlots`) and its
 * `TransactionState` is rebuilt when asked for. The rest (altered, queued work, ids that are not
 * canonical UUIDs, start times that are not `toISOString()` output) keep what they need aside.
 */
/** Everything a TransactionTable holds, as plain data and typed arrays (for snapshots). */
export interface TransactionTableImage {
  uuidWords: Uint32Array;
  codes: Uint32Array;
  startedAt: Float64Array;
  otherIds: string[];
  otherCodes: number[];
  /** null where the time is kept as text (JSON has no NaN). */
  otherStartedAt: Array<number | null>;
  startedText: Array<[number, string]>;
  detailed: Array<[number, TransactionState]>;
  operations: string[];
}

export class TransactionTable {
  private readonly uuids = new UuidSlots();
  /** Ids that are not canonical UUIDs get slots from 2^30 up, so the two ranges never meet. */
  private readonly otherIds = new Map<string, number>();
  private readonly otherIdOf: string[] = [];
  private codes = new Uint32Array(1024);
  private startedAt = new Float64Array(1024);
  private otherCodes: number[] = [];
  private otherStartedAt: number[] = [];
  private readonly startedText = new Map<number, string>();
  private readonly detailed = new Map<number, TransactionState>();
  private readonly operations: string[] = [];
  private readonly operationCodes = new Map<string, number>();

  get size(): number {
    return this.uuids.size + this.otherIdOf.length;
  }

  toImage(): TransactionTableImage {
    const n = this.uuids.size;
    return {
      uuidWords: this.uuids.exportWords(),
      codes: this.codes.slice(0, n),
      startedAt: this.startedAt.slice(0, n),
      otherIds: [...this.otherIdOf],
      otherCodes: [...this.otherCodes],
      otherStartedAt: this.otherStartedAt.map((ms) => (Number.isNaN(ms) ? null : ms)),
      startedText: [...this.startedText],
      // Copies: the live objects may change after the image is taken.
      detailed: [...this.detailed].map(([slot, tx]) => [slot, { ...tx, properties: { ...tx.properties }, ...(tx.callerKeys ? { callerKeys: [...tx.callerKeys] } : {}) }]),
      operations: [...this.operations],
    };
  }

  static fromImage(image: TransactionTableImage): TransactionTable {
    const table = new TransactionTable();
    const n = image.codes.length;
    if (image.uuidWords.length !== n * 4 || image.startedAt.length !== n) throw new Error('transaction image columns differ in length');
    table.uuids.importWords(image.uuidWords);
    table.codes = new Uint32Array(Math.max(1024, n * 2));
    table.codes.set(image.codes);
    table.startedAt = new Float64Array(Math.max(1024, n * 2));
    table.startedAt.set(image.startedAt);
    image.otherIds.forEach((id, i) => {
      table.otherIds.set(id, OTHER_BASE + i);
      table.otherIdOf.push(id);
    });
    table.otherCodes = [...image.otherCodes];
    table.otherStartedAt = image.otherStartedAt.map((ms) => (ms === null ? NaN : ms));
    for (const [slot, text] of image.startedText) table.startedText.set(slot, text);
    for (const [slot, tx] of image.detailed) table.detailed.set(slot, tx);
    image.operations.forEach((operation, code) => {
      table.operations.push(operation);
      table.operationCodes.set(operation, code);
    });
    return table;
  }

  has(id: string): boolean {
    return this.slotOf(id) >= 0;
  }

  /** A fresh object for a compact transaction, the live one for a detailed one: do not change it. */
  get(id: string): TransactionState | undefined {
    const slot = this.slotOf(id);
    return slot < 0 ? undefined : this.stateAt(slot, id);
  }

  /** The transaction as an object whose changes are kept. */
  forUpdate(id: string): TransactionState | undefined {
    const slot = this.slotOf(id);
    if (slot < 0) return undefined;
    const code = this.codeAt(slot);
    if (code & DETAILED) return this.detailed.get(slot);
    const state = this.stateAt(slot, id);
    this.detailed.set(slot, state);
    this.setCode(slot, code | DETAILED);
    this.startedText.delete(slot);
    return state;
  }

  put(tx: TransactionState): void {
    let slot = this.slotOf(tx.id);
    if (slot < 0) slot = this.newSlot(tx.id);
    this.detailed.delete(slot);
    this.startedText.delete(slot);
    const startedAt = standardStart(tx);
    if (startedAt === undefined) {
      this.detailed.set(slot, tx);
      this.setCode(slot, DETAILED);
      this.setStartedAt(slot, NaN);
      return;
    }
    this.setCode(slot, STATUSES.indexOf(tx.status) | (this.operationCode(tx.operation) << OPERATION_SHIFT));
    const ms = isoMillis(startedAt);
    if (ms !== undefined) {
      this.setStartedAt(slot, ms);
    } else {
      this.setStartedAt(slot, NaN);
      this.startedText.set(slot, startedAt);
    }
  }

  /**
   * A table without the transactions that ended before `cutoffMillis` (by their start time), but for
   * those `keep` names; answers it and how many it left out.
   */
  withoutFinishedBefore(cutoffMillis: number, keep: ReadonlySet<string>): { table: TransactionTable; forgotten: number } {
    const table = new TransactionTable();
    let forgotten = 0;
    for (const tx of this.values()) {
      const started = isoMillis(tx.properties.started_at ?? '') ?? Date.parse(tx.properties.started_at ?? '');
      const finished = tx.status === 'Succeeded' || tx.status === 'Failed' || tx.status === 'Canceled';
      if (finished && started < cutoffMillis && !keep.has(tx.id)) forgotten++;
      else table.put(tx);
    }
    return { table, forgotten };
  }

  /** The transactions whose `table` is `id`: only detailed ones have a table. */
  idsOfTable(id: ObjectId): string[] {
    const k = keyOf(id);
    const ids: string[] = [];
    for (const tx of this.detailed.values()) if (tx.table !== undefined && keyOf(tx.table) === k) ids.push(tx.id);
    return ids;
  }

  *ids(): IterableIterator<string> {
    for (let slot = 0; slot < this.uuids.size; slot++) yield this.uuids.uuidAt(slot);
    yield* this.otherIdOf;
  }

  *values(): IterableIterator<TransactionState> {
    for (let slot = 0; slot < this.uuids.size; slot++) yield this.stateAt(slot, this.uuids.uuidAt(slot));
    for (let i = 0; i < this.otherIdOf.length; i++) yield this.stateAt(OTHER_BASE + i, this.otherIdOf[i]);
  }

  private stateAt(slot: number, id: string): TransactionState {
    const code = this.codeAt(slot);
    if (code & DETAILED) return this.detailed.get(slot)!;
    const operation = this.operations[code >>> OPERATION_SHIFT];
    const ms = slot >= OTHER_BASE ? this.otherStartedAt[slot - OTHER_BASE] : this.startedAt[slot];
    const started_at = Number.isNaN(ms) ? this.startedText.get(slot)! : new Date(ms).toISOString();
    // Same fields in the same order as evolve first records them: the canonical dump depends on it.
    return { id, status: STATUSES[code & STATUS_BITS], operation, properties: { operation, started_at } };
  }

  private slotOf(id: string): number {
    const slot = this.uuids.find(id);
    if (slot >= 0) return slot;
    return this.otherIds.get(id) ?? -1;
  }

  private newSlot(id: string): number {
    const slot = this.uuids.add(id);
    if (slot >= 0) {
      if (slot === this.codes.length) {
        this.codes = grow(this.codes, new Uint32Array(slot * 2));
        this.startedAt = grow(this.startedAt, new Float64Array(slot * 2));
      }
      return slot;
    }
    const other = OTHER_BASE + this.otherIdOf.length;
    this.otherIds.set(id, other);
    this.otherIdOf.push(id);
    this.otherCodes.push(0);
    this.otherStartedAt.push(NaN);
    return other;
  }

  private codeAt(slot: number): number {
    return slot >= OTHER_BASE ? this.otherCodes[slot - OTHER_BASE] : this.codes[slot];
  }

  private setCode(slot: number, code: number): void {
    if (slot >= OTHER_BASE) this.otherCodes[slot - OTHER_BASE] = code;
    else this.codes[slot] = code;
  }

  private setStartedAt(slot: number, ms: number): void {
    if (slot >= OTHER_BASE) this.otherStartedAt[slot - OTHER_BASE] = ms;
    else this.startedAt[slot] = ms;
  }

  private operationCode(operation: string): number {
    let code = this.operationCodes.get(operation);
    if (code === undefined) {
      code = this.operations.length;
      this.operations.push(operation);
      this.operationCodes.set(operation, code);
    }
    return code;
  }
}

const OTHER_BASE = 2 ** 30;

/** The start time of a transaction whose properties are exactly what evolve first gives it. */
function standardStart(tx: TransactionState): string | undefined {
  if (tx.table !== undefined) return undefined;
  const p = tx.properties;
  let n = 0;
  for (const key in p) {
    if ((n === 0 && key !== 'operation') || (n === 1 && key !== 'started_at') || n === 2) return undefined;
    n++;
  }
  if (n !== 2 || p.operation !== tx.operation || typeof p.started_at !== 'string') return undefined;
  if (!STATUSES.includes(tx.status)) return undefined;
  return p.started_at;
}

/**
 * The time of a `toISOString()` output (YYYY-MM-DDTHH:mm:ss.sssZ), or undefined for anything that
 * would not print back the same. Read by hand: Date.parse and toISOString cost more than the rest
 * of folding a commit.
 */
export function isoMillis(s: string): number | undefined {
  if (s.length !== 24 || s[4] !== '-' || s[7] !== '-' || s[10] !== 'T' || s[13] !== ':' || s[16] !== ':' || s[19] !== '.' || s[23] !== 'Z') {
    return undefined;
  }
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  const milli = digits(s, 20, 3);
  // Date.UTC reads years 0-99 as 1900-1999.
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || milli < 0) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, milli);
}

function daysIn(year: number, month: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

/** A run of decimal digits as a number; -1 if any character is not a digit. */
function digits(s: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function grow<T extends Uint32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
