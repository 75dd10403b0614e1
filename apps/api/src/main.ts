import { loadConfigOrExit } from '@app/config';
import { createApiApp, listen } from './bootstrap';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const app = await createApiApp(config);
  await listen(app, config);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
