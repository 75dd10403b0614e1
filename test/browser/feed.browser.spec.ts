import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';
import { WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ROOT_KEY = 'feed-root-key-0123456789';
const READER_KEY = 'feed-reader-key-0123456789';
const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');

/** The console's change-feed page: a database's subscriptions with their lag and last error, for its admins. */
describe('the change feed in the console, in headless Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with: apt-get install -y chromium`);
    receiver = await startWebhookReceiver();
    const env = {
      AUTH_API_KEYS: JSON.stringify([
        { principal: 'root', sha256: sha256(ROOT_KEY), databases: ['*'], level: 'admin' },
        { principal: 'reader', sha256: sha256(READER_KEY), databases: ['*'], level: 'read' },
      ]),
      WEBHOOK_SECRET_KEY: 'a-console-key-of-at-least-thirty-two-characters',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    };
    [server, browser] = await Promise.all([startServer({ env }), chromium.launch({ executablePath: CHROMIUM, args: ARGS })]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
  });

  it('lists the subscriptions with their lag and last error, and refuses a principal who is no admin', async () => {
    const root = new Api(server.url, { 'x-api-key': ROOT_KEY });
    receiver.failing.add('/down');
    expect((await root.post('/v1/subscriptions/create', { url: `${receiver.url}/down`, from_revision: 0 })).status).toBe(200);
    expect((await root.post('/v1/namespace/seen/create', {})).status).toBe(200);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/ui/`);
    await page.getByRole('textbox', { name: 'API key' }).fill(ROOT_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').filter({ hasText: 'root' }).waitFor();
    await page.getByRole('link', { name: 'Change feed' }).click();
    const row = page.getByTestId('subscription').filter({ hasText: `${receiver.url}/down` });
    await row.filter({ hasText: 'the receiver answered 500' }).waitFor({ timeout: 15_000 });
    expect(Number(await row.getByTestId('lag-events').innerText())).toBeGreaterThan(0);
    // The receiver answers again: the page, refreshing, shows it caught up.
    receiver.failing.clear();
    await row.getByTestId('lag-events').filter({ hasText: /^0$/ }).waitFor({ timeout: 30_000 });
    await context.close();

    const other = await browser.newContext();
    const readerPage = await other.newPage();
    await readerPage.goto(`${server.url}/ui/`);
    await readerPage.getByRole('textbox', { name: 'API key' }).fill(READER_KEY);
    await readerPage.getByRole('button', { name: 'Sign in' }).click();
    await readerPage.getByTestId('who').filter({ hasText: 'reader' }).waitFor();
    await readerPage.goto(`${server.url}/ui/#/feed`);
    await readerPage.getByRole('alert').filter({ hasText: '403' }).waitFor();
    await other.close();
  });
});
