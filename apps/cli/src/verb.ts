import type { ParseArgsConfig } from 'node:util';
import type { AppConfig } from '@app/config';
import { EventStore, createEventStore, redactedUrl } from '@app/event-store';

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

/** A setting fit for output: a connection string's password removed. */
export function shown(setting: string): string {
  return redactedUrl(setting);
}
