import { invalidInput } from '@app/catalog';

export interface JsonShapeLimits {
  maxDepth: number;
  maxArrayItems: number;
  maxObjectKeys: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * Follows a JSON body's nesting byte by byte as its chunks arrive, before JSON.parse sees it:
 * how deep it nests, how many items an array holds and how many members an object holds. JSON.parse
 * runs on the event loop and its cost is not linear in the members of one object (300,000 of them
 * took 400 ms), so those are bounded while the body arrives, each chunk costing its own length.
 * Bytes of a multi-byte UTF-8 character never equal the ASCII bytes looked at, so no decoding is
 * needed. What JSON.parse would refuse anyway (a malformed body) is left to it.
 */
export class JsonShapeScan {
  private inString = false;
  private escaped = false;
  private depth = 0;
  /** Per open bracket: whether it is an object, and how many commas it has seen so far. */
  private readonly objects: boolean[] = [];
  private readonly commas: number[] = [];

  constructor(private readonly limits: JsonShapeLimits) {}

  push(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) this.inString = false;
        continue;
      }
      if (b === QUOTE) {
        this.inString = true;
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (++this.depth > this.limits.maxDepth) throw invalidInput(`the request body nests arrays and objects deeper than ${this.limits.maxDepth} (JSON_MAX_DEPTH)`);
        this.objects.push(b === OPEN_OBJECT);
        this.commas.push(0);
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (this.depth === 0) continue;
        this.depth--;
        this.objects.pop();
        this.commas.pop();
      } else if (b === COMMA) {
        if (this.depth === 0) continue;
        const top = this.depth - 1;
        const items = ++this.commas[top] + 1;
        if (this.objects[top]) {
          if (items > this.limits.maxObjectKeys) throw invalidInput(`the request body holds an object of more than ${this.limits.maxObjectKeys} members (JSON_MAX_OBJECT_KEYS)`);
        } else if (items > this.limits.maxArrayItems) {
          throw invalidInput(`the request body holds an array of more than ${this.limits.maxArrayItems} items; at most ${this.limits.maxArrayItems} are allowed (JSON_MAX_ARRAY_ITEMS)`);
        }
      }
    }
  }
}
