import { z } from 'zod';
import { int } from './env-values';

/**
 * Bounds on what a request may carry, checked before any parser (Lance's SQL parser, apache-arrow's
 * IPC reader) sees it: those parsers recurse and allocate on the input's word, so an input of a few
 * hundred bytes can otherwise end the process.
 */
export interface InputLimits {
  sqlExpression: {
    /** UTF-8 bytes of one SQL expression (filter, predicate, update value, column expression). */
    maxBytes: number;
    /** Words, literals, operators and commas of one expression. */
    maxTerms: number;
    /** How deep its operators and calls may nest, counted as Lance's expression tree would be. */
    maxDepth: number;
    /** The largest count `repeat`, `lpad`, `rpad`, `array_repeat`, `array_resize`, `range` and `generate_series` may be given. */
    maxRepeat: number;
  };
  arrow: {
    /** Fields of one Arrow schema, children included. */
    maxFields: number;
    /** How deep an Arrow schema's fields may nest. */
    maxDepth: number;
    /** Field nodes (one column of one batch) of all the batches of one body. */
    maxNodes: number;
    /** Dictionary batches of one body, deltas included. */
    maxDictionaryBatches: number;
  };
  properties: {
    /** Entries of one property map (namespace, table, version metadata, transaction). */
    maxCount: number;
    /** UTF-8 bytes of its keys and values together. */
    maxBytes: number;
  };
  /** UTF-8 bytes of a request's context: the body's `context` and its `x-lance-ctx-*` headers together. */
  contextMaxBytes: number;
  /** How deep a JSON body's arrays and objects may nest. */
  jsonMaxDepth: number;
  /** Items of one array of a JSON body. */
  jsonMaxArrayItems: number;
  /** Members of one object of a JSON body. */
  jsonMaxObjectKeys: number;
  /** Bytes of a JSON body (Arrow bodies have BODY_LIMIT). */
  jsonBodyLimit: number;
}

export const inputLimitsEnvSchema = {
  SQL_EXPRESSION_MAX_BYTES: int('SQL_EXPRESSION_MAX_BYTES', 1024 * 1024, 64, 64 * 1024 * 1024),
  SQL_EXPRESSION_MAX_TERMS: int('SQL_EXPRESSION_MAX_TERMS', 10_000, 16, 10_000_000),
  // Lance's planner recursed out of its stack on a chain of about 600 `+` (and about 40,000 ANDs).
  SQL_EXPRESSION_MAX_DEPTH: int('SQL_EXPRESSION_MAX_DEPTH', 100, 8, 100_000),
  SQL_EXPRESSION_MAX_REPEAT: int('SQL_EXPRESSION_MAX_REPEAT', 1000, 1, 1_000_000_000),
  ARROW_MAX_FIELDS: int('ARROW_MAX_FIELDS', 10_000, 1, 10_000_000),
  ARROW_MAX_DEPTH: int('ARROW_MAX_DEPTH', 64, 1, 10_000),
  ARROW_MAX_NODES: int('ARROW_MAX_NODES', 100_000, 1, 100_000_000),
  // apache-arrow concatenates a dictionary at each delta: 10,000 empty deltas cost 23 s.
  ARROW_MAX_DICTIONARY_BATCHES: int('ARROW_MAX_DICTIONARY_BATCHES', 1000, 1, 10_000_000),
  PROPERTIES_MAX_COUNT: int('PROPERTIES_MAX_COUNT', 1000, 1, 10_000_000),
  PROPERTIES_MAX_BYTES: int('PROPERTIES_MAX_BYTES', 64 * 1024, 64, 1024 * 1024 * 1024),
  CONTEXT_MAX_BYTES: int('CONTEXT_MAX_BYTES', 8 * 1024, 64, 64 * 1024 * 1024),
  JSON_MAX_DEPTH: int('JSON_MAX_DEPTH', 64, 4, 10_000),
  // The schemas gather every wrong item's complaint in one call's arguments: about 150,000 overflowed the stack.
  JSON_MAX_ARRAY_ITEMS: int('JSON_MAX_ARRAY_ITEMS', 65_536, 16, 10_000_000),
  // JSON.parse of one object with 300,000 members took 400 ms of the event loop.
  JSON_MAX_OBJECT_KEYS: int('JSON_MAX_OBJECT_KEYS', 10_000, 16, 10_000_000),
  // A batch commit of 8,000 tables' versions is about 2 MiB; JSON.parse takes about 10 ms a MiB.
  JSON_BODY_LIMIT: int('JSON_BODY_LIMIT', 4 * 1024 * 1024, 1024, 2 ** 31 - 1),
};

type InputLimitsEnv = { [K in keyof typeof inputLimitsEnvSchema]: z.infer<(typeof inputLimitsEnvSchema)[K]> };

export function readInputLimits(c: InputLimitsEnv): InputLimits {
  return {
    sqlExpression: {
      maxBytes: c.SQL_EXPRESSION_MAX_BYTES,
      maxTerms: c.SQL_EXPRESSION_MAX_TERMS,
      maxDepth: c.SQL_EXPRESSION_MAX_DEPTH,
      maxRepeat: c.SQL_EXPRESSION_MAX_REPEAT,
    },
    arrow: { maxFields: c.ARROW_MAX_FIELDS, maxDepth: c.ARROW_MAX_DEPTH, maxNodes: c.ARROW_MAX_NODES, maxDictionaryBatches: c.ARROW_MAX_DICTIONARY_BATCHES },
    properties: { maxCount: c.PROPERTIES_MAX_COUNT, maxBytes: c.PROPERTIES_MAX_BYTES },
    contextMaxBytes: c.CONTEXT_MAX_BYTES,
    jsonMaxDepth: c.JSON_MAX_DEPTH,
    jsonMaxArrayItems: c.JSON_MAX_ARRAY_ITEMS,
    jsonMaxObjectKeys: c.JSON_MAX_OBJECT_KEYS,
    jsonBodyLimit: c.JSON_BODY_LIMIT,
  };
}

/** The limits every unset variable gives. */
export const DEFAULT_INPUT_LIMITS: InputLimits = readInputLimits(z.object(inputLimitsEnvSchema).parse({}));
