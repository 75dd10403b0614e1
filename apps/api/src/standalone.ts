import { loadConfigOrExit } from '@app/config';
import { WorkerModule } from '../../worker/src/worker.module';
import { createApiApp, listen } from './bootstrap';

/** `npm start`: the API and a worker in one process, for a single machine. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const app = await createApiApp(config, [WorkerModule.forConfig(config)]);
  await listen(app, config);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
