"""Arrow IPC of flat columns, written (int64, utf8) and read with the standard library.

The Python check runs where pyarrow cannot be installed (no PyPI), and the catalog's create,
insert and query routes speak Arrow IPC streams. This writes what they accept (a schema message,
one record batch, end of stream) and reads what QueryTable answers (the IPC file format) for
flat columns, enough to count rows and read their values. Flatbuffers are laid out front to back: a table's vtable just
before it, its children after it, every scalar aligned to its size (Rust's verifier checks).
"""

import struct

CONTINUATION = b"\xff\xff\xff\xff"
FILE_MAGIC = b"ARROW1"
METADATA_V5 = 4
HEADER_SCHEMA, HEADER_RECORD_BATCH = 1, 3
TYPE_INT, TYPE_FLOAT, TYPE_UTF8, TYPE_BOOL = 2, 3, 5, 6
SCALAR = {"bool": ("<?", 1), "u8": ("<B", 1), "i16": ("<h", 2), "i32": ("<i", 4), "i64": ("<q", 8)}


class Table:
    def __init__(self, *fields):
        self.fields = fields  # by field id: None, (scalar kind, value) or a child object


class Str:
    def __init__(self, text):
        self.data = text.encode()


class TableVec:
    def __init__(self, items):
        self.items = items


class StructVec:
    """A vector of 16-byte structs of two int64s (FieldNode, Buffer)."""

    def __init__(self, pairs):
        self.pairs = pairs


def _pad(buf, align, before=0):
    while (len(buf) + before) % align:
        buf.append(0)


def _emit(buf, obj, pending):
    if isinstance(obj, Str):
        _pad(buf, 4)
        at = len(buf)
        buf += struct.pack("<I", len(obj.data)) + obj.data + b"\0"
        return at
    if isinstance(obj, TableVec):
        _pad(buf, 4)
        at = len(buf)
        buf += struct.pack("<I", len(obj.items))
        for item in obj.items:
            pending.append((len(buf), item))
            buf += b"\0\0\0\0"
        return at
    if isinstance(obj, StructVec):
        _pad(buf, 8, before=4)
        at = len(buf)
        buf += struct.pack("<I", len(obj.pairs))
        for a, b in obj.pairs:
            buf += struct.pack("<qq", a, b)
        return at
    # A table: inline layout relative to an 8-aligned start, soffset first.
    layout, size = [], 4
    for field in obj.fields:
        if field is None:
            layout.append(None)
            continue
        width = SCALAR[field[0]][1] if isinstance(field, tuple) else 4
        size += (-size) % width
        layout.append(size)
        size += width
    size += (-size) % 4
    _pad(buf, 2)
    vtable_at = len(buf)
    buf += struct.pack("<HH", 4 + 2 * len(layout), size)
    buf += b"".join(struct.pack("<H", 0 if o is None else o) for o in layout)
    _pad(buf, 8)
    at = len(buf)
    buf += bytes(size)
    struct.pack_into("<i", buf, at, at - vtable_at)
    for field, offset in zip(obj.fields, layout):
        if field is None:
            continue
        if isinstance(field, tuple):
            struct.pack_into(SCALAR[field[0]][0], buf, at + offset, field[1])
        else:
            pending.append((at + offset, field))
    return at


def flatbuffer(root):
    buf = bytearray(8)  # root offset, then 4 bytes so the first table can start 8-aligned
    pending = [(0, root)]
    while pending:
        where, obj = pending.pop(0)
        struct.pack_into("<I", buf, where, _emit(buf, obj, pending) - where)
    _pad(buf, 8)
    return bytes(buf)


def _message(header_type, header, body_length):
    meta = flatbuffer(Table(("i16", METADATA_V5), ("u8", header_type), header, ("i64", body_length)))
    return CONTINUATION + struct.pack("<i", len(meta)) + meta


def _field(name, kind, nullable):
    if kind == "int64":
        type_type, type_table = TYPE_INT, Table(("i32", 64), ("bool", True))
    elif kind == "utf8":
        type_type, type_table = TYPE_UTF8, Table()
    else:
        raise ValueError(f"unsupported column type {kind}")
    return Table(Str(name), ("bool", nullable), ("u8", type_type), type_table, None, TableVec([]))


def write_stream(columns):
    """columns: list of (name, 'int64' | 'utf8', values); no nulls. Returns Arrow IPC stream bytes."""
    rows = len(columns[0][2])
    body, buffers, nodes = bytearray(), [], []

    def add(data):
        buffers.append((len(body), len(data)))
        body.extend(data)
        _pad(body, 8)

    for name, kind, values in columns:
        if len(values) != rows:
            raise ValueError(f"column {name} has {len(values)} values, not {rows}")
        nodes.append((rows, 0))
        add(b"")  # no validity bitmap: no nulls
        if kind == "int64":
            add(struct.pack(f"<{rows}q", *values))
        else:
            encoded = [v.encode() for v in values]
            offsets, end = [0], 0
            for e in encoded:
                end += len(e)
                offsets.append(end)
            add(struct.pack(f"<{rows + 1}i", *offsets))
            add(b"".join(encoded))
    schema = Table(None, TableVec([_field(n, k, False) for n, k, _ in columns]))
    batch = Table(("i64", rows), StructVec(nodes), StructVec(buffers))
    return (
        _message(HEADER_SCHEMA, schema, 0)
        + _message(HEADER_RECORD_BATCH, batch, len(body))
        + bytes(body)
        + CONTINUATION
        + b"\0\0\0\0"
    )


class _Reader:
    def __init__(self, buf):
        self.buf = buf

    def root(self):
        return struct.unpack_from("<I", self.buf, 0)[0]

    def _slot(self, table, field):
        vtable = table - struct.unpack_from("<i", self.buf, table)[0]
        vt_size = struct.unpack_from("<H", self.buf, vtable)[0]
        if 4 + 2 * field >= vt_size:
            return None
        offset = struct.unpack_from("<H", self.buf, vtable + 4 + 2 * field)[0]
        return table + offset if offset else None

    def scalar(self, table, field, fmt, default=0):
        at = self._slot(table, field)
        return default if at is None else struct.unpack_from(fmt, self.buf, at)[0]

    def child(self, table, field):
        at = self._slot(table, field)
        return None if at is None else at + struct.unpack_from("<I", self.buf, at)[0]

    def string(self, table, field):
        at = self.child(table, field)
        n = struct.unpack_from("<I", self.buf, at)[0]
        return bytes(self.buf[at + 4 : at + 4 + n]).decode()

    def tables(self, table, field):
        at = self.child(table, field)
        if at is None:
            return []
        n = struct.unpack_from("<I", self.buf, at)[0]
        return [at + 4 + 4 * i + struct.unpack_from("<I", self.buf, at + 4 + 4 * i)[0] for i in range(n)]

    def pairs(self, table, field):
        at = self.child(table, field)
        n = struct.unpack_from("<I", self.buf, at)[0]
        return [struct.unpack_from("<qq", self.buf, at + 4 + 16 * i) for i in range(n)]


def read_ipc(data):
    """Reads Arrow IPC of flat columns, stream or file format (QueryTable answers the file format):
    returns (column names, list of row dicts). A file is read through its footer, which holds the
    schema and where each record batch is: what lies between the magic and the batches is the
    writer's business (the schema message, or padding)."""
    data = bytes(data)
    if data[:6] != FILE_MAGIC:
        schema, rows, pos = None, [], 0
        while pos < len(data):
            header_type, meta, header, body, pos = _message_at(data, pos)
            if header_type is None:
                break
            if header_type == HEADER_SCHEMA:
                schema = _schema(meta, header)
            else:
                rows.extend(_batch_rows(schema, meta, header, body))
        return [name for name, *_ in (schema or [])], rows
    (footer_length,) = struct.unpack_from("<i", data, len(data) - 10)
    footer = _Reader(data[len(data) - 10 - footer_length : len(data) - 10])
    schema, rows = _schema(footer, footer.child(footer.root(), 1)), []
    blocks = footer.child(footer.root(), 3)
    for i in range(struct.unpack_from("<I", footer.buf, blocks)[0] if blocks is not None else 0):
        (offset,) = struct.unpack_from("<q", footer.buf, blocks + 4 + 24 * i)
        header_type, meta, header, body, _ = _message_at(data, offset)
        rows.extend(_batch_rows(schema, meta, header, body))
    return [name for name, *_ in schema], rows


def _message_at(data, pos):
    """The encapsulated message at `pos`: (header type, reader, header table, body, next position);
    header type None at the end-of-stream marker."""
    if data[pos : pos + 4] == CONTINUATION:
        pos += 4
    (length,) = struct.unpack_from("<i", data, pos)
    pos += 4
    if length == 0:
        return None, None, None, None, pos
    meta = _Reader(data[pos : pos + length])
    pos += length
    message = meta.root()
    header_type = meta.scalar(message, 1, "<B")
    header = meta.child(message, 2)
    body_length = meta.scalar(message, 3, "<q")
    if header_type not in (HEADER_SCHEMA, HEADER_RECORD_BATCH):
        raise ValueError(f"unexpected message type {header_type}")
    if header_type == HEADER_RECORD_BATCH and meta.child(header, 3) is not None:
        raise ValueError("compressed record batches are not read here")
    return header_type, meta, header, data[pos : pos + body_length], pos + body_length


def _schema(meta, table):
    schema = []
    for field in meta.tables(table, 1):
        if meta.tables(field, 5):
            raise ValueError("nested columns are not read here")
        type_type = meta.scalar(field, 2, "<B")
        type_table = meta.child(field, 3)
        width = meta.scalar(type_table, 0, "<i") if type_type == TYPE_INT else None
        signed = meta.scalar(type_table, 1, "<?", False) if type_type == TYPE_INT else None
        precision = meta.scalar(type_table, 0, "<h") if type_type == TYPE_FLOAT else None
        schema.append((meta.string(field, 0), type_type, width, signed, precision))
    return schema


def _batch_rows(schema, meta, header, body):
    count = meta.scalar(header, 0, "<q")
    nodes, buffers = meta.pairs(header, 1), meta.pairs(header, 2)
    columns, b = [], 0
    for (name, type_type, width, signed, precision), (length, nulls) in zip(schema, nodes):
        validity = buffers[b]
        valid = lambda i, v=validity: nulls == 0 or v[1] == 0 or body[v[0] + i // 8] >> (i % 8) & 1
        if type_type == TYPE_UTF8:
            (off_at, _), (data_at, _) = buffers[b + 1], buffers[b + 2]
            b += 3
            offsets = struct.unpack_from(f"<{length + 1}i", body, off_at)
            values = [body[data_at + offsets[i] : data_at + offsets[i + 1]].decode() for i in range(length)]
        elif type_type == TYPE_INT:
            fmt = {8: "b", 16: "h", 32: "i", 64: "q"}[width]
            fmt = fmt if signed else fmt.upper()
            values = list(struct.unpack_from(f"<{length}{fmt}", body, buffers[b + 1][0]))
            b += 2
        elif type_type == TYPE_FLOAT:
            fmt = {1: "f", 2: "d"}[precision]
            values = list(struct.unpack_from(f"<{length}{fmt}", body, buffers[b + 1][0]))
            b += 2
        elif type_type == TYPE_BOOL:
            at = buffers[b + 1][0]
            values = [bool(body[at + i // 8] >> (i % 8) & 1) for i in range(length)]
            b += 2
        else:
            raise ValueError(f"column {name}: Arrow type {type_type} is not read here")
        columns.append((name, [v if valid(i) else None for i, v in enumerate(values)]))
    return [{name: values[i] for name, values in columns} for i in range(count)]
