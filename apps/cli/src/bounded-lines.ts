/** A line that went on past the reader's bound; `line` counts from 1. */
export class LineTooLong extends Error {
  constructor(
    readonly line: number,
    readonly maxBytes: number,
  ) {
    super(`line ${line} is longer than ${maxBytes} bytes`);
    this.name = 'LineTooLong';
  }
}

/**
 * The lines of a byte stream, split at each '\n' and decoded as UTF-8 once whole. A line's bytes are
 * counted as they arrive, and one longer than `maxBytes` ends the reading with LineTooLong before
 * more of it is held: whatever the input, a line costs a few times `maxBytes` of memory at most
 * (its chunks, their concatenation and the decoded string), never its own length.
 */
export async function* boundedLines(input: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<string> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let line = 1;
  for await (const chunk of input) {
    let from = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, from)) {
      const bytes = heldBytes + end - from;
      if (bytes > maxBytes) throw new LineTooLong(line, maxBytes);
      // Most lines lie inside one chunk: decoded from it, not copied first.
      if (held.length === 0) yield chunk.toString('utf8', from, end);
      else yield Buffer.concat([...held, chunk.subarray(from, end)], bytes).toString('utf8');
      held = [];
      heldBytes = 0;
      line++;
      from = end + 1;
    }
    if (from === chunk.length) continue;
    heldBytes += chunk.length - from;
    if (heldBytes > maxBytes) throw new LineTooLong(line, maxBytes);
    held.push(from === 0 ? chunk : chunk.subarray(from));
  }
  if (heldBytes > 0) yield Buffer.concat(held, heldBytes).toString('utf8');
}
