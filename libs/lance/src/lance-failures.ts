/**
 * What a Lance failure means for the caller, read from its message. Lance reports every failure as
 * text that mixes the caller's own input with Rust source paths, the server's file paths and
 * chains of causes; none of that may reach an answer. The classification keeps only what the
 * caller needs (the kind, and the caller's own words where Lance quotes them) and the whole text
 * goes to the log.
 */
export type LanceFailureKind =
  /** The catalog API a worker or data-plane process opens managed tables through did not answer. */
  | 'catalog-unreachable'
  /** The warehouse's object store did not answer, or answered with a server error. */
  | 'store-unreachable'
  /** The catalog answered a managed table's own read or commit "unavailable" (code 17). */
  | 'catalog-unavailable'
  /**
   * Lance could not learn whether its commit was applied: the catalog answered the commit
   * "unavailable" (a service it needs was down) and had not recorded the version when Lance looked.
   */
  | 'commit-unknown'
  /** Lance gave up committing against concurrent writers. */
  | 'conflict'
  /** Rows or columns brought in do not fit the table's schema. */
  | 'schema'
  /** An expression names a column the table does not have. */
  | 'no-column'
  /** A file the table's manifest names is not in storage. */
  | 'missing-files'
  /** Lance's native code panicked: a fault of Lance or of this server, never of the request alone. */
  | 'panic'
  /** Anything else Lance refused: the request's content does not suit the table. */
  | 'refused';

export interface LanceFailure {
  kind: LanceFailureKind;
  /** The reason in the catalog's words, with only the caller's own input quoted; absent when there is nothing safe to say. */
  reason?: string;
}

const CATALOG_CALL = /\/v1\/(table|namespace|transaction)\//;
// `IncompleteMessage`: the connection closed before an answer came (the catalog's process ended under the call).
const UNREACHABLE = /(error sending request|connection refused|tcp connect error|dns error|connection reset|operation timed out|client error \(Connect\)|IncompleteMessage)/i;
const SERVER_ERROR = /non-2xx status code: 5(0[02-9]|[1-9]\d)/i;

export function classifyLanceFailure(message: string, writing = false): LanceFailure {
  if (/panicked at|\bpanic\b/i.test(message)) return { kind: 'panic' };
  if (/Commit result for version \d+ is unknown|treating the commit status as unknown/i.test(message)) return { kind: 'commit-unknown' };
  // Before "Service unavailable": lance-namespace reports a catalog it could not connect to in the same words as a 503.
  if (storeUnreachable(message)) return { kind: CATALOG_CALL.test(message) ? 'catalog-unreachable' : 'store-unreachable' };
  if (/Namespace error: Service unavailable: /.test(message)) return { kind: 'catalog-unavailable' };
  // Lance's compaction rebased over a concurrent commit can find its fragment ids taken: the same work on the new version succeeds.
  if (/commit conflict|retryable commit conflict|too many concurrent writers|Fragment ids must be unique/i.test(message)) return { kind: 'conflict' };
  const missing = /\bwas not found\b|\bNot found: |\bNo such file\b|\bNotFound\b|object at location .* not found/i.test(message);
  if (missing && !/No field named|not found in (the )?schema|field .* not found/i.test(message)) return { kind: 'missing-files' };
  const reason = reasonOf(message);
  if (/No field named /.test(message)) return { kind: 'no-column', reason };
  if (writing && /schema|field .* not found|not found in (the )?schema|append with different|type mismatch|cannot cast|incompatible|nullab/i.test(message)) {
    return { kind: 'schema', reason };
  }
  return { kind: 'refused', reason };
}

/** Lance's object store could not be reached, or answered with a server error other than "not implemented". */
export function storeUnreachable(message: string): boolean {
  return UNREACHABLE.test(message) || SERVER_ERROR.test(message);
}

/**
 * The caller's mistake in the catalog's words, for the mistakes Lance names precisely: each
 * pattern quotes only what came from the request (a column name, a function name, the parser's
 * expectation about the request's own text).
 */
function reasonOf(message: string): string | undefined {
  const quoted = (s: string) => clip(s.replace(/[`"]/g, ''));
  let m: RegExpExecArray | null;
  if ((m = /No field named ([^\s.,]+)/.exec(message))) return `no column named '${quoted(m[1])}' in the table`;
  if ((m = /Found field not in schema: ([^\s,]+)/.exec(message))) return `field '${quoted(m[1])}' is not in the table's schema`;
  if ((m = /Invalid function '([^']+)'/.exec(message))) return `no SQL function named '${quoted(m[1])}'`;
  if ((m = /Expected: (.{1,80}?), found: (.{1,80}?)(?:\)|$| at Line)/m.exec(message))) return `not a valid SQL expression: expected ${quoted(m[1])}, found ${quoted(m[2])}`;
  if (/sql parser error|Error parsing/i.test(message)) return 'not a valid SQL expression';
  if ((m = /could not convert to literal of type '(\w+)'/.exec(message))) return `a literal does not match its column's type (${quoted(m[1])})`;
  if ((m = /query vector dimension: (\d+)/.exec(message))) return `no vector column has dimension ${m[1]}`;
  if (/Cannot infer common argument type|type_coercion|coercion/i.test(message)) return 'the expression combines values of incompatible types';
  return undefined;
}

function clip(s: string): string {
  return s.length > 64 ? `${s.slice(0, 64)}...` : s;
}
