import { boundedLines } from '../src/bounded-lines';

async function* streamOf(chunks: Iterable<Buffer>): AsyncGenerator<Buffer> {
  yield* chunks;
}

const linesOf = async (chunks: AsyncIterable<Buffer>, maxBytes: number) => {
  const out: string[] = [];
  for await (const line of boundedLines(chunks, maxBytes)) out.push(line);
  return out;
};

describe('boundedLines', () => {
  it('splits at each newline across chunks, decoding a character whose bytes two chunks share', async () => {
    const text = Buffer.from('{"a":1}\n\n{"name":"λx"}\nlast');
    const at = text.indexOf('λ') + 1;
    expect(await linesOf(streamOf([text.subarray(0, 3), text.subarray(3, at), text.subarray(at)]), 64)).toEqual(['{"a":1}', '', '{"name":"λx"}', 'last']);
    expect(await linesOf(streamOf([Buffer.from('one\n')]), 64)).toEqual(['one']);
  });

  it('takes a line of maxBytes and refuses one byte more at its number, reading no chunk after the one that passes the bound', async () => {
    expect(await linesOf(streamOf([Buffer.from('12345\n1234'), Buffer.from('5\n')]), 5)).toEqual(['12345', '12345']);
    for (const [start, pulledAfter] of [['12345\n1234', 1], ['12345\n123456', 0]] as const) {
      let pulled = 0;
      // A second line that never ends.
      async function* endless(): AsyncGenerator<Buffer> {
        yield Buffer.from(start);
        for (;;) {
          pulled++;
          yield Buffer.from('5678');
        }
      }
      await expect(linesOf(endless(), 5)).rejects.toMatchObject({ name: 'LineTooLong', line: 2, maxBytes: 5 });
      expect({ start, pulled }).toEqual({ start, pulled: pulledAfter });
    }
  });
});
