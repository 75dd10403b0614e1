import * as arrow from 'apache-arrow';
import { invalidInput } from '@app/catalog';

export interface JsonArrowDataType {
  type: string;
  fields?: JsonArrowField[];
  length?: number;
}
export interface JsonArrowField {
  name: string;
  nullable: boolean;
  type: JsonArrowDataType;
  metadata?: Record<string, string>;
}
export interface JsonArrowSchema {
  fields: JsonArrowField[];
  metadata?: Record<string, string>;
}

const mapOf = (m: Map<string, string>) => (m.size ? Object.fromEntries(m) : undefined);

/** An Arrow schema in the spec's JSON form, with the type names the Lance namespace uses. */
export function toJsonArrowSchema(schema: arrow.Schema): JsonArrowSchema {
  const metadata = mapOf(schema.metadata);
  return { fields: schema.fields.map(toJsonField), ...(metadata ? { metadata } : {}) };
}

function toJsonField(field: arrow.Field): JsonArrowField {
  const metadata = mapOf(field.metadata);
  return { name: field.name, nullable: field.nullable, type: toJsonType(field.type), ...(metadata ? { metadata } : {}) };
}

function toJsonType(t: arrow.DataType): JsonArrowDataType {
  if (arrow.DataType.isDictionary(t)) return toJsonType(t.dictionary);
  if (arrow.DataType.isNull(t)) return { type: 'null' };
  if (arrow.DataType.isBool(t)) return { type: 'bool' };
  if (arrow.DataType.isInt(t)) return { type: `${t.isSigned ? 'int' : 'uint'}${t.bitWidth}` };
  if (arrow.DataType.isFloat(t)) return { type: ['float16', 'float32', 'float64'][t.precision] };
  if (arrow.DataType.isUtf8(t)) return { type: 'utf8' };
  if (arrow.DataType.isLargeUtf8(t)) return { type: 'large_utf8' };
  if (arrow.DataType.isBinary(t)) return { type: 'binary' };
  if (arrow.DataType.isLargeBinary(t)) return { type: 'large_binary' };
  if (arrow.DataType.isFixedSizeBinary(t)) return { type: 'fixed_size_binary', length: t.byteWidth };
  if (arrow.DataType.isDate(t)) return { type: t.unit === arrow.DateUnit.DAY ? 'date32' : 'date64' };
  if (arrow.DataType.isTimestamp(t)) return { type: 'timestamp' };
  if (arrow.DataType.isDecimal(t)) return { type: 'decimal' };
  if (arrow.DataType.isList(t)) return { type: 'list', fields: [toJsonField(t.children[0])] };
  if (arrow.DataType.isFixedSizeList(t)) return { type: 'fixed_size_list', length: t.listSize, fields: [toJsonField(t.children[0])] };
  if (arrow.DataType.isStruct(t)) return { type: 'struct', fields: t.children.map(toJsonField) };
  return { type: String(t).toLowerCase() };
}

/** The inverse, for schemas a client sends; unknown type names are refused with code 13. */
export function fromJsonArrowSchema(json: JsonArrowSchema): arrow.Schema {
  return new arrow.Schema(json.fields.map(fromJsonField), new Map(Object.entries(json.metadata ?? {})));
}

function fromJsonField(f: JsonArrowField): arrow.Field {
  return new arrow.Field(f.name, fromJsonType(f.type), f.nullable, new Map(Object.entries(f.metadata ?? {})));
}

function fromJsonType(t: JsonArrowDataType): arrow.DataType {
  const child = () => {
    if (!t.fields?.length) throw invalidInput(`type '${t.type}' needs a child field`);
    return fromJsonField(t.fields[0]);
  };
  switch (t.type) {
    case 'null':
      return new arrow.Null();
    case 'bool':
    case 'boolean':
      return new arrow.Bool();
    case 'int8':
      return new arrow.Int8();
    case 'int16':
      return new arrow.Int16();
    case 'int32':
      return new arrow.Int32();
    case 'int64':
      return new arrow.Int64();
    case 'uint8':
      return new arrow.Uint8();
    case 'uint16':
      return new arrow.Uint16();
    case 'uint32':
      return new arrow.Uint32();
    case 'uint64':
      return new arrow.Uint64();
    case 'float16':
      return new arrow.Float16();
    case 'float32':
      return new arrow.Float32();
    case 'float64':
      return new arrow.Float64();
    case 'utf8':
    case 'string':
      return new arrow.Utf8();
    case 'large_utf8':
    case 'large_string':
      return new arrow.LargeUtf8();
    case 'binary':
      return new arrow.Binary();
    case 'large_binary':
      return new arrow.LargeBinary();
    case 'fixed_size_binary':
      return new arrow.FixedSizeBinary(t.length ?? 0);
    case 'date32':
      return new arrow.DateDay();
    case 'date64':
      return new arrow.DateMillisecond();
    case 'timestamp':
      return new arrow.TimestampMicrosecond();
    case 'list':
      return new arrow.List(child());
    case 'fixed_size_list':
      if (!t.length) throw invalidInput("type 'fixed_size_list' needs a length");
      return new arrow.FixedSizeList(t.length, child());
    case 'struct':
      return new arrow.Struct((t.fields ?? []).map(fromJsonField));
    default:
      throw invalidInput(`unknown data type '${t.type}'`);
  }
}
