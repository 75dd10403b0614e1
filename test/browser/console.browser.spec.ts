import * as lancedb from '@lancedb/lancedb';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, BrowserContext, Page, chromium } from 'playwright-core';
import { ARROW_STREAM, arrowStream } from '../support/arrow-data';
import { clientScenario, CLIENT_SCENARIO_PASSED } from '../support/client-process';
import { Api } from '../support/http';
import { RunningBalancer, startNginx } from '../support/nginx';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import * as arrow from 'apache-arrow';

// What page.evaluate reads on the page's side (the project's types hold no DOM).
declare const window: Record<string, unknown>;
declare const document: { cookie: string; querySelectorAll(selector: string): { length: number }; querySelector(selector: string): { textContent: string } | null };
declare const sessionStorage: { length: number };
declare const localStorage: { length: number };

const ROOT = resolve(__dirname, '../..');
const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ADMIN_KEY = 'console-admin-key-0123456789';
const ETL_KEY = 'console-etl-key-0123456789';
const READER_KEY = 'console-reader-key-0123456789';
const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');
const KEYS = JSON.stringify([
  { principal: 'ops', sha256: sha256(ADMIN_KEY), databases: ['*'], level: 'admin' },
  { principal: 'etl', sha256: sha256(ETL_KEY), databases: ['default'], level: 'admin' },
  { principal: 'viewer', sha256: sha256(READER_KEY), databases: ['*'], level: 'read' },
]);
const MARKUP = '<img src=x onerror=window.__xss=1>';
const SCRIPT_CELL = '<script>window.__xss=2</script><img src=x onerror=window.__xss=3>';
const IMG_DIR = join(ROOT, 'docs/img');

/** Signs in on the console's form and waits for the header to name the principal. */
async function signIn(page: Page, base: string, key: string, principal: string): Promise<void> {
  await page.goto(`${base}/ui/`);
  await page.getByRole('textbox', { name: 'API key' }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').filter({ hasText: principal }).waitFor();
}

function trackErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // A refused request shows in the console as a failed resource load: those are expected here.
  page.on('console', (m) => m.type() === 'error' && !/status of 40[13]/.test(m.text()) && errors.push(m.text()));
  return errors;
}

/**
 * Servers and a browser started together. What started is handed to `keepBrowser` and `keepServer`
 * (servers in order) even when something else failed to start, so the suite's afterAll stops it: a
 * server left running keeps Jest from ever ending.
 */
async function startAll(servers: Array<Promise<RunningServer>>, launching: Promise<Browser>, keepBrowser: (b: Browser) => void, keepServer: (s: RunningServer) => void): Promise<void> {
  const [browser, ...started] = await Promise.allSettled([launching, ...servers]);
  if (browser.status === 'fulfilled') keepBrowser(browser.value);
  for (const s of started) if (s.status === 'fulfilled') keepServer(s.value as RunningServer);
  const failed = [browser, ...started].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

describe('the console in headless Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let api: Api;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with: apt-get install -y chromium`);
    await startAll([startServer({ env: { AUTH_API_KEYS: KEYS } })], chromium.launch({ executablePath: CHROMIUM, args: ARGS }), (b) => (browser = b), (s) => (server = s));
    api = new Api(server.url, { 'x-api-key': ADMIN_KEY });
    // The lancedb client makes shop.items as etl: 5 versions (create, append, update, delete).
    expect(await clientScenario(server.url, ETL_KEY, 'shop')).toEqual({ ...CLIENT_SCENARIO_PASSED, awsVariables: expect.any(Array) });
    expect((await api.post('/v1/namespace/bulk/create', {})).status).toBe(200);
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, (_, j) => api.post(`/v1/table/bulk%24t${String(i + j).padStart(4, '0')}/declare`, {})));
      expect(batch.every((r) => r.status === 200)).toBe(true);
    }
    // Markup in a namespace's name, a table's name and its data.
    expect((await api.post(`/v1/namespace/${Api.id([MARKUP])}/create`, {})).status).toBe(200);
    const rows = arrow.tableFromArrays({ id: Int32Array.from([1, 2]), note: [SCRIPT_CELL, 'plain'] });
    expect((await api.send('POST', `/v1/table/${Api.id([MARKUP, MARKUP])}/create`, arrowStream(rows), ARROW_STREAM)).status).toBe(200);
    mkdirSync(IMG_DIR, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('serves /ui with a strict Content-Security-Policy, content types and caching', async () => {
    const page = await fetch(`${server.url}/ui`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(`${server.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const again = await fetch(`${server.url}${script}`, { headers: { 'if-none-match': asset.headers.get('etag')! } });
    expect(again.status).toBe(304);
    // The whole console, gzipped as served, stays small.
    const built = join(ROOT, 'dist/console/assets');
    const gzipped = await Promise.all(
      readdirSync(built).map(async (f) => {
        const res = await fetch(`${server.url}/ui/assets/${f}`, { headers: { 'accept-encoding': 'gzip' } });
        return Number(res.headers.get('content-length') ?? (await res.arrayBuffer()).byteLength);
      }),
    );
    expect(gzipped.reduce((a, b) => a + b, 0)).toBeLessThan(300 * 1024);
    expect((await fetch(`${server.url}/ui/assets/nothing.js`)).status).toBe(406);
  });

  it('calls only paths the served OpenAPI document lists', async () => {
    const served = (await api.get('/openapi.json')).body.paths as Record<string, Record<string, unknown>>;
    const sources = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? sources(join(dir, f)) : /\.tsx?$/.test(f) ? [join(dir, f)] : []));
    const text = sources(join(ROOT, 'apps/console/src'))
      .filter((f) => !f.endsWith('.d.ts'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const paths = [...text.matchAll(/'(\/v1\/[^']*)'/g)].map((m) => m[1]);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((p) => !served[p])).toEqual([]);
    const typed = [...text.matchAll(/lance\.(GET|POST)\('([^']+)'/g)].map((m) => [m[1].toLowerCase(), m[2]]);
    expect(typed.filter(([method, path]) => !served[path]?.[method])).toEqual([]);
  });

  it('signs in with a key, refusing a wrong one, and shows the level', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = trackErrors(page);
    await page.goto(`${server.url}/ui/`);
    await page.getByRole('heading', { name: 'Sign in to the Lance catalog' }).waitFor();
    await page.getByRole('textbox', { name: 'API key' }).fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: '401' }).waitFor();
    await page.getByRole('textbox', { name: 'API key' }).fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('who').innerText()).resolves.toBe('ops · admin');
    // Kept for the tab's session only.
    const stored = await page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length, cookie: document.cookie }));
    expect(stored).toEqual({ session: 1, local: 0, cookie: '' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('browses 1,000 tables a page at a time, and finds them by the start of their name', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = trackErrors(page);
    await signIn(page, server.url, ADMIN_KEY, 'ops');
    await page.getByRole('complementary', { name: 'Namespaces' }).getByRole('link', { name: 'bulk', exact: true }).click();
    const tables = page.locator('ul.tables a');
    await page.waitForFunction(() => document.querySelector('ul.tables a')?.textContent === 't0000');
    expect(await tables.count()).toBe(50);
    const started = Date.now();
    for (let pageNo = 1; pageNo < 4; pageNo++) {
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.locator('ul.tables a', { hasText: `t${String(pageNo * 50).padStart(4, '0')}` }).waitFor();
    }
    expect(Date.now() - started).toBeLessThan(5_000);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.waitForFunction(() => document.querySelector('ul.tables a')?.textContent === 't0100');
    await page.getByLabel('Find tables whose name starts with').fill('t09');
    await page.waitForFunction(() => document.querySelector('ul.tables a')?.textContent === 't0900');
    expect(await tables.allInnerTexts()).toEqual(Array.from({ length: 50 }, (_, i) => `t${900 + i}`.replace(/^t/, 't0')));
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.waitForFunction(() => document.querySelector('ul.tables a')?.textContent === 't0950');
    expect(await tables.count()).toBe(50);
    await expect(page.getByRole('button', { name: 'Next page' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Find tables whose name starts with').fill('t0999');
    await page.waitForFunction(() => document.querySelectorAll('ul.tables a').length === 1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opens the lancedb client's table: its versions, who committed them, and two versions compared", async () => {
    // One more version, with a column added: a schema change to compare.
    expect((await api.post('/v1/table/shop%24items/add_columns', { new_columns: [{ name: 'doubled', expression: 'id * 2' }] })).status).toBe(200);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const errors = trackErrors(page);
    await signIn(page, server.url, ADMIN_KEY, 'ops');
    await page.goto(`${server.url}/ui/#/table/shop%24items`);
    await expect(page.getByTestId('latest-version').innerText()).resolves.toBe('6');
    await expect(page.getByRole('rowheader', { name: 'doubled' }).isVisible()).resolves.toBe(true);
    await page.getByRole('link', { name: 'Versions', exact: true }).click();
    const rows = page.getByTestId('versions').locator('tbody tr');
    await rows.nth(5).waitFor();
    const byVersion = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 4).map((c) => (c as unknown as { innerText: string }).innerText)));
    expect(byVersion.map((r) => r[0])).toEqual(['6', '5', '4', '3', '2', '1']);
    // The lancedb client committed versions 1-5 as etl; the server's column change was ops's.
    expect(byVersion.slice(1).map((r) => r[2])).toEqual(['etl', 'etl', 'etl', 'etl', 'etl']);
    expect(byVersion[0][2]).toBe('ops');
    expect(byVersion[0][3]).toMatch(/AddColumns/);
    await page.getByTestId('compare-from').selectOption('2');
    await page.getByTestId('compare-to').selectOption('6');
    await page.getByRole('button', { name: 'Compare' }).click();
    await expect(page.getByTestId('rows-delta').innerText()).resolves.toBe('-10 rows');
    await expect(page.getByTestId('schema-changes').innerText()).resolves.toMatch(/doubled added to/);
    await page.screenshot({ path: join(IMG_DIR, 'console-table.png') });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('starts an index build and shows it reach Succeeded without a reload', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = trackErrors(page);
    await signIn(page, server.url, ADMIN_KEY, 'ops');
    await page.goto(`${server.url}/ui/#/table/shop%24items/indexes`);
    await page.getByTestId('indexes').waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    await page.getByText('Build an index').click();
    await page.getByLabel('Column').selectOption('vector');
    await page.getByLabel('Type').selectOption('HNSW');
    await page.getByLabel('Name').fill('vec_hnsw');
    await page.getByRole('button', { name: 'Build index' }).click();
    await page.getByRole('status').filter({ hasText: 'queued: transaction' }).waitFor();
    const row = page.locator('tr[data-index="vec_hnsw"]');
    await row.locator('.badge', { hasText: 'ready' }).waitFor({ timeout: 30_000 });
    await page.goto(`${server.url}/ui/#/jobs`);
    await page.getByTestId('jobs').locator('tr', { hasText: 'vec_hnsw' }).locator('.badge', { hasText: 'Succeeded' }).waitFor();
    expect(await page.evaluate(() => window.__sameDocument)).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a commit by the lancedb client in the history as it happens', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const errors = trackErrors(page);
    await signIn(page, server.url, ADMIN_KEY, 'ops');
    await page.goto(`${server.url}/ui/#/history`);
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor();
    await page.getByTestId('timeline').locator('li').first().waitFor();
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': ETL_KEY } });
    const table = await db.openTable('items', ['shop']);
    const before = (await table.version());
    await table.add([{ id: 1000, text: 'live', vector: [1, 0, 0, 1], doubled: 2000 }]);
    table.close();
    db.close();
    const event = page.getByTestId('timeline').locator('li[data-type="TableVersionCreated"]', { hasText: `v${before + 1}` });
    await event.waitFor({ timeout: 10_000 });
    await expect(event.locator('.principal').innerText()).resolves.toBe('by etl');
    // Filtered by principal and event type, and one event opened with its transaction.
    await page.getByLabel('Principal', { exact: true }).selectOption('etl');
    await page.getByLabel('Event', { exact: true }).selectOption('TableVersionCreated');
    await event.getByRole('button', { name: /Details of event/ }).click();
    await event.locator('pre').waitFor();
    await expect(event.locator('pre').innerText()).resolves.toContain(`"version": ${before + 1}`);
    await page.getByLabel('Principal', { exact: true }).selectOption('');
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await page.screenshot({ path: join(IMG_DIR, 'console-history.png') });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("offers a read-only key no actions, and shows the API's 403 for a forged one", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    trackErrors(page);
    await signIn(page, server.url, READER_KEY, 'viewer');
    await expect(page.getByTestId('who').innerText()).resolves.toBe('viewer · read');
    await page.goto(`${server.url}/ui/#/table/shop%24items`);
    await page.getByTestId('latest-version').waitFor();
    const actions = page.getByRole('button', { name: /Drop table|Restore|Build index|Create tag|Create branch|Cancel|Undrop/ });
    const tabs = { overview: 'caption:text("Schema")', versions: '[data-testid=versions]', branches: '[data-testid=branch-tree]', tags: 'text=No tags.', indexes: '[data-testid=indexes]' };
    for (const [tab, shown] of Object.entries(tabs)) {
      await page.goto(`${server.url}/ui/#/table/shop%24items/${tab}`);
      await page.locator('.tab-body').locator(shown).first().waitFor();
      expect(await actions.count()).toBe(0);
      expect(await page.locator('details.action').count()).toBe(0);
    }
    await page.goto(`${server.url}/ui/#/ns/shop`);
    await page.locator('ul.tables a').first().waitFor();
    await expect(page.getByText('Create a namespace here').count()).resolves.toBe(0);

    // The page is told the key is an admin's: it offers the drop, and the API still refuses it.
    await page.route('**/v1/whoami', async (route) => {
      const real = await route.fetch();
      await route.fulfill({ response: real, json: { ...(await real.json()), level: 'admin' } });
    });
    await page.goto(`${server.url}/ui/#/table/shop%24items`);
    await page.reload();
    await page.getByRole('button', { name: 'Drop table…' }).click();
    await page.getByLabel('Type items to confirm').fill('items');
    await page.getByRole('button', { name: 'Drop', exact: true }).click();
    const refusal = page.getByRole('alert').filter({ hasText: '403' });
    await refusal.waitFor();
    await expect(refusal.innerText()).resolves.toMatch(/403 \(code 15\): viewer may not administer database 'default'/);
    expect((await api.post('/v1/table/shop%24items/exists', {})).status).toBe(200);
    await context.close();
  });

  it('names every control, and is used with the keyboard alone', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/ui/`);
    // Sign in without the mouse: Tab to the key, type it, Enter submits.
    await page.getByRole('heading', { name: 'Sign in to the Lance catalog' }).waitFor();
    for (let i = 0; i < 10 && !(await page.getByRole('textbox', { name: 'API key' }).evaluate((el) => el === (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)); i++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.type(ADMIN_KEY);
    await page.keyboard.press('Enter');
    await page.getByTestId('who').filter({ hasText: 'ops' }).waitFor();
    const unnamed = async () =>
      page.evaluate(() =>
        [...(document as unknown as { querySelectorAll(s: string): Iterable<{ tagName: string; outerHTML: string; getAttribute(n: string): string | null; labels?: { length: number } | null; textContent: string | null }> }).querySelectorAll('input, select, button, textarea')]
          .filter((el) => !el.getAttribute('aria-label') && !(el.labels && el.labels.length) && !(el.tagName === 'BUTTON' && el.textContent?.trim()))
          .map((el) => el.outerHTML.slice(0, 120)),
      );
    for (const hash of ['/', '/ns/shop', '/table/shop%24items', '/table/shop%24items/versions', '/table/shop%24items/branches', '/table/shop%24items/tags', '/table/shop%24items/indexes', '/table/shop%24items/preview', '/history', '/jobs']) {
      await page.goto(`${server.url}/ui/#${hash}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      expect({ hash, controls: await unnamed() }).toEqual({ hash, controls: [] });
    }
    await context.close();
  });

  it('shows markup in names and data as text, running none of it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = trackErrors(page);
    await signIn(page, server.url, ADMIN_KEY, 'ops');
    await page.getByRole('complementary', { name: 'Namespaces' }).getByRole('link', { name: MARKUP }).click();
    await page.getByRole('heading', { name: MARKUP }).waitFor();
    await page.locator('ul.tables a', { hasText: MARKUP }).click();
    await page.getByRole('heading', { name: MARKUP }).waitFor();
    await page.getByRole('link', { name: 'Rows', exact: true }).click();
    await page.getByTestId('rows').getByRole('cell', { name: SCRIPT_CELL }).waitFor();
    await page.goto(`${server.url}/ui/#/history`);
    await page.getByTestId('timeline').locator('li', { hasText: MARKUP }).first().waitFor();
    const ran = await page.evaluate(() => ({ xss: window.__xss, images: document.querySelectorAll('img').length, scripts: document.querySelectorAll('body script').length }));
    expect(ran).toEqual({ xss: undefined, images: 0, scripts: 0 });
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the console through nginx over two API replicas', () => {
  const dataDir = tempDataDir();
  let apis: RunningServer[] = [];
  let lb: RunningBalancer;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with: apt-get install -y chromium`);
    const env = { AUTH_API_KEYS: KEYS, AUTH_SERVICE_KEY: 'console-service-key-0123456789abcdef', QUEUE_PREFIX: `console-lb-${process.pid}-${Date.now()}` };
    await startAll(
      [0, 1].map(() => startServer({ dataDir, entry: 'api', env })),
      chromium.launch({ executablePath: CHROMIUM, args: ARGS }),
      (b) => (browser = b),
      (s) => apis.push(s),
    );
    lb = await startNginx(apis.map((a) => a.url));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await lb?.stop();
    await Promise.all(apis.map((a) => a.stop()));
  });

  it('loads, signs in and follows the history live, whichever replica answers and whichever one is written to', async () => {
    context = await browser.newContext();
    const page = await context.newPage();
    const errors = trackErrors(page);
    await signIn(page, lb.url, ADMIN_KEY, 'ops');
    await page.goto(`${lb.url}/ui/#/history`);
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor();
    // Written through each replica directly: the feed, held open through nginx on one of them, shows both.
    for (const [i, a] of apis.entries()) {
      expect((await new Api(a.url, { 'x-api-key': ADMIN_KEY }).post(`/v1/namespace/through${i}/create`, {})).status).toBe(200);
    }
    for (const i of [0, 1]) await page.getByTestId('timeline').locator('li', { hasText: `through${i}` }).waitFor({ timeout: 10_000 });
    await page.goto(`${lb.url}/ui/#/`);
    await page.getByRole('complementary', { name: 'Namespaces' }).getByRole('link', { name: 'through1' }).waitFor();
    expect(errors).toEqual([]);
  });
});
