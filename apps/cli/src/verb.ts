import { existsSync } from 'node:fs';
import type { ParseArgsConfig } from 'node:util';
import type { AppConfig } from '@app/config';
import { EventStore, createEventStore, embeddedStoreFile, redactedUrl } from '@app/event-store';
import { CommandFailure, EXIT } from './exit-codes';

export interface VerbContext {
  values: Record<string, string | boolean | undefined>;
  config: AppConfig;
  /** Output for a script: no progress line, one JSON document on stdout. */
  json: boolean;
}

export interface VerbResult {
  exitCode: number;
  /** The lines a person reads (findings, what to do next); the summary follows them. */
  lines: string[];
  /** What happened, in numbers: the last lines for a person, the JSON document for a script. */
  summary: Record<string, unknown>;
}

export interface Verb {
  name: string;
  summary: string;
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(context: VerbContext): Promise<VerbResult>;
}

/** An event store the way the server opens one from its EVENT_STORE setting. */
export function openStore(setting: string, config: AppConfig): EventStore {
  return createEventStore(setting, config.dataDir, { poolSize: Math.min(config.eventStorePoolSize, 4) });
}

/**
 * The event store a verb reads, which must already be there: opening the embedded store makes its
 * file, so a mistyped DATA_DIR would otherwise be read as an empty catalog (exit 2 instead).
 */
export function openExistingStore(setting: string, config: AppConfig): EventStore {
  const file = embeddedStoreFile(config.dataDir);
  if (setting === 'embedded' && !existsSync(file)) {
    throw new CommandFailure(EXIT.usage, `there is no embedded event store at ${file}: set DATA_DIR to the data directory of the catalog to read`);
  }
  return openStore(setting, config);
}

/** A setting fit for output: a connection string's password removed. */
export function shown(setting: string): string {
  return redactedUrl(setting);
}
