import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const ADMIN_KEY = 'browser-admin-key-0123456789';
const READER_KEY = 'browser-reader-key-0123456789';
const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');

/** The API page and the queue dashboard, loaded and rendered by Debian's Chromium, headless. */
describe('pages in headless Chromium', () => {
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with: apt-get install -y chromium`);
    server = await startServer({
      env: {
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'ops', sha256: sha256(ADMIN_KEY), databases: ['*'], level: 'admin' },
          { principal: 'viewer', sha256: sha256(READER_KEY), databases: ['*'], level: 'read' },
        ]),
      },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Without the background-networking flags Chromium keeps dialling Google's hosts on a closed network.
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('renders the browsable API page at /docs from /openapi.json, with no credentials', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto(`${server.url}/docs`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('.swagger-ui .opblock', { timeout: 30_000 });
    expect(await page.locator('.swagger-ui .info .title').innerText()).toMatch(/Lance REST catalog/);
    const served = (await new Api(server.url).get('/openapi.json')).body.paths as Record<string, object>;
    const expected = Object.entries(served).flatMap(([path, item]) => Object.keys(item).filter((k) => ['get', 'post'].includes(k)).map((m) => `${m.toUpperCase()} ${path}`));
    // The page renders operations as they scroll into view: read it from top to bottom. An
    // operation with several tags is shown under each of them: count distinct method+path pairs.
    const shown = new Set<string>();
    for (let atBottom = false, turns = 0; !atBottom && turns < 200; turns++) {
      for (const op of await page.$$eval('.swagger-ui .opblock', (blocks) =>
        blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
      )) {
        shown.add(op);
      }
      atBottom = (await page.evaluate('(() => { window.scrollBy(0, window.innerHeight); return window.scrollY + window.innerHeight >= document.body.scrollHeight - 2; })()')) as boolean;
      await page.waitForTimeout(50);
    }
    for (const op of await page.$$eval('.swagger-ui .opblock', (blocks) =>
      blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    )) {
      shown.add(op);
    }
    const operations = shown.size;
    expect([...shown].sort()).toEqual(expected.sort());
    expect(operations).toBeGreaterThan(50);
    expect(shown.has('POST /v1/table/{id}/version/create')).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders the queue dashboard for an admin, and refuses others', async () => {
    // A browser without credentials is challenged for them (Basic); the challenge itself is a 401.
    const anonymous = await browser.newContext();
    const refused = await anonymous.request.get(`${server.url}/admin/queues`);
    expect(refused.status()).toBe(401);
    expect(refused.headers()['www-authenticate']).toMatch(/^Basic/);
    await anonymous.close();

    const viewer = await browser.newContext({ httpCredentials: { username: 'viewer', password: READER_KEY } });
    expect((await (await viewer.newPage()).goto(`${server.url}/admin/queues`))?.status()).toBe(403);
    await viewer.close();

    const admin = await browser.newContext({ httpCredentials: { username: 'ops', password: ADMIN_KEY } });
    const page = await admin.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto(`${server.url}/admin/queues`);
    expect(res?.status()).toBe(200);
    await page.getByText('index-builds').first().waitFor({ timeout: 30_000 });
    await page.getByText('query-analysis').first().waitFor({ timeout: 30_000 });
    expect(await page.title()).toMatch(/Lance catalog queues/);
    expect(errors).toEqual([]);
    await admin.close();
  });
});
