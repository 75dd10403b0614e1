import { tableFromIPC } from 'apache-arrow';

export interface Rows {
  columns: string[];
  types: string[];
  rows: string[][];
}

const CELL_MAX = 200;

/** QueryTable's Arrow IPC answer as text cells: every value is shown as text, never as markup. */
export function rowsOfIpc(bytes: Uint8Array): Rows {
  const table = tableFromIPC(bytes);
  const fields = table.schema.fields;
  const rows: string[][] = [];
  for (let i = 0; i < table.numRows; i++) {
    const row = table.get(i);
    rows.push(fields.map((f) => cellText(row?.[f.name])));
  }
  return { columns: fields.map((f) => f.name), types: fields.map((f) => String(f.type)), rows };
}

export function cellText(value: unknown): string {
  const text = plain(value);
  return text.length > CELL_MAX ? `${text.slice(0, CELL_MAX)}…` : text;
}

function plain(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  if (ArrayBuffer.isView(value)) return `[${Array.from(value as unknown as ArrayLike<number | bigint>, (v) => formatNumber(v)).join(', ')}]`;
  const maybeArrow = value as { toArray?: () => unknown; toJSON?: () => unknown };
  if (typeof maybeArrow.toArray === 'function' && !(value instanceof Array)) return plain(maybeArrow.toArray());
  if (Array.isArray(value)) return `[${value.map(plain).join(', ')}]`;
  if (typeof maybeArrow.toJSON === 'function') return JSON.stringify(maybeArrow.toJSON(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
}

function formatNumber(v: number | bigint): string {
  return typeof v === 'number' && !Number.isInteger(v) ? String(Math.round(v * 1e4) / 1e4) : String(v);
}
