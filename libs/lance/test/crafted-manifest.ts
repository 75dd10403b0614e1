import { Writer } from 'protobufjs/minimal';

export type CraftedFile = { path?: string; baseId?: number };
export interface Crafted {
  fragments?: Array<{ files?: CraftedFile[]; deletionBaseId?: number; externalRowIds?: string }>;
  basePaths?: Array<{ id: number; path?: string; isDatasetRoot?: boolean }>;
  indexBaseIds?: number[];
}

/** A manifest file laid out as Lance lays one out ([index section] message, footer), with only the fields the reference check reads. */
export function manifestFile(m: Crafted): Buffer {
  const parts: Buffer[] = [Buffer.from('data before the sections')];
  let indexSection: number | undefined;
  if (m.indexBaseIds) {
    const section = Writer.create();
    for (const id of m.indexBaseIds) section.uint32((1 << 3) | 2).fork().uint32((3 << 3) | 2).string('idx').uint32(9 << 3).uint32(id).ldelim();
    indexSection = parts[0].length;
    parts.push(lengthPrefixed(section.finish()));
  }
  const w = Writer.create();
  for (const f of m.fragments ?? []) {
    w.uint32((2 << 3) | 2).fork();
    w.uint32(1 << 3).uint64(1);
    for (const file of f.files ?? []) {
      w.uint32((2 << 3) | 2).fork();
      if (file.path !== undefined) w.uint32((1 << 3) | 2).string(file.path);
      if (file.baseId !== undefined) w.uint32(7 << 3).uint32(file.baseId);
      w.ldelim();
    }
    if (f.deletionBaseId !== undefined) w.uint32((3 << 3) | 2).fork().uint32(4 << 3).uint64(1).uint32(7 << 3).uint32(f.deletionBaseId).ldelim();
    if (f.externalRowIds !== undefined) w.uint32((6 << 3) | 2).fork().uint32((1 << 3) | 2).string(f.externalRowIds).ldelim();
    w.ldelim();
  }
  w.uint32(3 << 3).uint64(7);
  if (indexSection !== undefined) w.uint32(6 << 3).uint64(indexSection);
  for (const b of m.basePaths ?? []) {
    w.uint32((18 << 3) | 2).fork().uint32(1 << 3).uint32(b.id).uint32(3 << 3).bool(b.isDatasetRoot ?? true);
    if (b.path !== undefined) w.uint32((4 << 3) | 2).string(b.path);
    w.ldelim();
  }
  const position = parts.reduce((n, p) => n + p.length, 0);
  parts.push(lengthPrefixed(w.finish()));
  const footer = Buffer.alloc(16);
  footer.writeBigInt64LE(BigInt(position), 0);
  footer.writeUInt16LE(0, 8);
  footer.writeUInt16LE(3, 10);
  footer.write('LANC', 12, 'latin1');
  return Buffer.concat([...parts, footer]);
}

function lengthPrefixed(message: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32LE(message.length);
  return Buffer.concat([length, message]);
}
