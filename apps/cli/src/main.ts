import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@app/config';
import { EventStoreUnavailableError } from '@app/event-store';
import { StorageUnavailableError } from '@app/storage';
import { exportVerb, importVerb } from './archive-verbs';
import { CommandFailure, EXIT } from './exit-codes';
import { migrateVerb } from './migrate-verb';
import { recoverVerb } from './recover-verb';
import { Verb, VerbResult } from './verb';
import { verifyVerb } from './verify-verb';

const VERBS: Verb[] = [exportVerb, importVerb, migrateVerb, verifyVerb, recoverVerb];

const USAGE = `Usage: lance-catalog <verb> [options]

The operator's command of the Lance catalog. It reads the same environment as the server
(EVENT_STORE, DATA_DIR, WAREHOUSE, the AWS_* settings...).

Verbs:
${VERBS.map((v) => `  ${v.name.padEnd(9)}${v.summary}`).join('\n')}

Every verb takes --json (one JSON document on stdout, for scripts) and --help.
Exit status: 0 done; 1 findings, or a check that failed; 2 wrong usage or environment;
3 refused, the target event store is not empty; 4 damaged archive; 5 a store could not be used.`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? EXIT.ok : EXIT.usage;
  }
  const verb = VERBS.find((v) => v.name === name);
  if (!verb) {
    console.error(`unknown verb '${name}'\n\n${USAGE}`);
    return EXIT.usage;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: rest, options: { ...verb.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }));
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${verb.help}`);
    return EXIT.usage;
  }
  if (values.help) {
    console.log(verb.help);
    return EXIT.ok;
  }
  const json = values.json === true;
  let result: VerbResult;
  try {
    const config = loadConfig(process.env);
    result = await verb.run({ values, config, json });
  } catch (e) {
    const [exitCode, message] = failureOf(e);
    if (json) console.log(JSON.stringify({ verb: verb.name, exit_code: exitCode, error: message }, null, 2));
    else console.error(`lance-catalog ${verb.name}: ${message}`);
    return exitCode;
  }
  if (json) {
    console.log(JSON.stringify({ verb: verb.name, exit_code: result.exitCode, ...result.summary }, null, 2));
  } else {
    for (const line of result.lines) console.log(line);
    for (const [key, value] of Object.entries(result.summary)) {
      if (typeof value !== 'object' || value === null) console.log(`${key.replace(/_/g, ' ')}: ${value}`);
    }
  }
  return result.exitCode;
}

function failureOf(e: unknown): [number, string] {
  if (e instanceof CommandFailure) return [e.exitCode, e.message];
  if (e instanceof ConfigError) return [EXIT.usage, e.message];
  if (e instanceof EventStoreUnavailableError || e instanceof StorageUnavailableError) return [EXIT.failed, e.message];
  return [EXIT.failed, e instanceof Error ? e.message : String(e)];
}

// Exits at once: Lance's and the stores' clients may keep handles open that the answer must not wait for.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(EXIT.failed);
  },
);
