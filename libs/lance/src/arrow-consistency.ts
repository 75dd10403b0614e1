import * as arrow from 'apache-arrow';
import { invalidInput } from '@app/catalog';

/**
 * Refuses decoded columns whose own numbers contradict each other, as Lance's reader would, before
 * anything is recorded for the write: apache-arrow decodes what a body declares without checking
 * it (offsets past their values, more nulls than rows), and Lance refused such data only once the
 * table it was to be written into had been declared. Linear in the rows of variable-width columns.
 */
export function checkArrowConsistency(table: arrow.Table): void {
  for (const batch of table.batches) {
    batch.schema.fields.forEach((field, i) => checkData(batch.data.children[i], field.name, batch.numRows));
  }
}

function checkData(data: arrow.Data | undefined, column: string, parentRows = -1): void {
  const problem = (what: string) => invalidInput(`the request body's column '${column}' is not consistent: ${what}`);
  // A body may declare a field whose data it never carries: the decoder leaves a hole there.
  // apache-arrow itself writes none for the children of an empty list column: no rows, no hole.
  if (!data) {
    if (parentRows === 0) return;
    throw problem('the body carries no data for it');
  }
  if (data.nullCount > data.length) throw problem(`${data.nullCount} nulls in ${data.length} rows`);
  if (data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length * 8 < data.offset + data.length) throw problem('its validity bitmap is shorter than its rows');
  const offsets = data.valueOffsets as Int32Array | BigInt64Array | undefined;
  if (offsets && data.length > 0) {
    if (offsets.length < data.offset + data.length + 1) throw problem('fewer offsets than rows');
    const values = arrow.DataType.isList(data.type) || arrow.DataType.isMap(data.type) ? (data.children[0]?.length ?? 0) : (data.values?.length ?? 0);
    let previous = Number(offsets[data.offset]);
    if (previous < 0) throw problem('a negative offset');
    for (let i = data.offset + 1; i <= data.offset + data.length; i++) {
      const next = Number(offsets[i]);
      if (next < previous) throw problem('its offsets go backwards');
      previous = next;
    }
    if (previous > values) throw problem(`its last offset ${previous} lies past its ${values} values`);
  }
  if (arrow.DataType.isFixedSizeList(data.type) && (data.children[0]?.length ?? 0) < (data.offset + data.length) * data.type.listSize) {
    throw problem('fewer list values than its rows need');
  }
  const fields = (data.type as { children?: arrow.Field[] }).children ?? [];
  if (data.children.length < fields.length) throw problem(`${data.children.length} children for the ${fields.length} its type has`);
  for (let i = 0; i < data.children.length; i++) checkData(data.children[i], `${column}.${fields[i]?.name ?? i}`, data.length);
  if (arrow.DataType.isStruct(data.type) && data.children.some((c) => c.length < data.offset + data.length)) throw problem('a child shorter than its rows');
}
