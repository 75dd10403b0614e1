import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Browser, Page, chromium } from 'playwright-core';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ROOT_KEY = 'grants-root-key-0123456789';
const ANA_KEY = 'grants-ana-key-0123456789';
const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');
const KEYS = JSON.stringify([
  { principal: 'root', sha256: sha256(ROOT_KEY), databases: ['*'], level: 'admin' },
  { principal: 'ana', sha256: sha256(ANA_KEY), databases: ['default'], level: 'none', roles: ['ml'] },
]);

async function signIn(page: Page, base: string, key: string, principal: string): Promise<void> {
  await page.goto(`${base}/ui/`);
  await page.getByRole('textbox', { name: 'API key' }).fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').filter({ hasText: principal }).waitFor();
}

describe('grants in the console, in headless Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  let root: Api;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}; install it with: apt-get install -y chromium`);
    [server, browser] = await Promise.all([startServer({ env: { AUTH_API_KEYS: KEYS } }), chromium.launch({ executablePath: CHROMIUM, args: ARGS })]);
    root = new Api(server.url, { 'x-api-key': ROOT_KEY });
    for (const ns of ['features', 'finance']) expect((await root.post(`/v1/namespace/${ns}/create`, {})).status).toBe(200);
    for (const t of ['features%24f1', 'finance%24ledger']) expect((await root.post(`/v1/table/${t}/declare`, {})).status).toBe(200);
    expect((await root.post('/v1/grants/create', { grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('shows a principal whose grants decide only what it may read', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.url, ANA_KEY, 'ana');
    await page.getByTestId('who').filter({ hasText: 'by grants' }).waitFor();
    const tree = page.getByRole('complementary', { name: 'Namespaces' });
    await tree.getByRole('link', { name: 'features' }).waitFor();
    expect(await tree.getByRole('link', { name: 'finance' }).count()).toBe(0);
    await tree.getByRole('link', { name: 'features' }).click();
    await page.getByRole('link', { name: 'f1' }).waitFor();
    await context.close();
  });

  it('lists grants per securable with where they come from, grants, revokes, and shows them as of a time', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.url, ROOT_KEY, 'root');
    await page.goto(`${server.url}/ui/#/grants/table/features%24f1`);
    const grants = page.getByTestId('grants');
    await grants.getByRole('row', { name: /role ml write/ }).waitFor();
    expect(await grants.getByRole('row', { name: /role ml/ }).getByRole('link', { name: 'namespace features' }).count()).toBe(1);
    // The caller's own level comes from a request of its own, which may answer after the list's.
    await page.getByTestId('my-level').filter({ hasText: /^admin$/ }).waitFor();

    const beforeGrant = new Date(Date.now() - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await new Promise((r) => setTimeout(r, 1100));
    await page.getByRole('textbox', { name: 'Grantee name' }).fill('bob');
    await page.getByRole('combobox', { name: 'Level' }).selectOption('read');
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    await grants.getByRole('row', { name: /principal bob read this/ }).waitFor();
    expect((await root.post('/v1/grants/check', { principal: 'bob', table: ['features', 'f1'] })).body.level).toBe('read');

    // As of before the grant, bob is not there: not even for the one render between choosing the
    // time and the request for it (every DOM change is looked at before the browser paints it).
    await page.evaluate(`(() => {
      window.staleAsOf = [];
      new MutationObserver(() => {
        const table = document.querySelector('[data-testid="grants"]');
        if (table?.querySelector('caption')?.textContent.includes('as of') && table.textContent.includes('principal bob')) window.staleAsOf.push(table.textContent);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await page.getByLabel('As of').fill(beforeGrant);
    await grants.getByText('as of').waitFor();
    expect(await grants.getByRole('row', { name: /principal bob/ }).count()).toBe(0);
    expect(await page.evaluate('window.staleAsOf')).toEqual([]);
    await page.getByRole('button', { name: 'Now' }).click();
    await page.getByRole('button', { name: 'Revoke read of principal bob' }).click();
    await grants.getByRole('row', { name: /principal bob/ }).waitFor({ state: 'detached' });
    expect((await root.post('/v1/grants/check', { principal: 'bob', table: ['features', 'f1'] })).body.level).toBe('none');
    await context.close();
  });
});
