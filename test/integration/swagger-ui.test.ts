// Swagger UI in a real browser: Debian's chromium, driven headless by playwright-core (this
// machine cannot download browsers). It loads /apidocs/, shows every operation of the document,
// and runs GET /v1/ip against the live server ("Try it out" -> "Execute" -> a 200 shown).
// chromium.ts finds Debian's chromium or installs it (as root); where neither can be done this
// test fails and says so, rather than passing without having looked.
import { chromium, type Browser } from 'playwright-core';
import { documentedOperations } from '../../src/api/index.js';
import { CHROMIUM_ARGS, ensureChromium } from './chromium.js';
import { World } from './world.js';

let world: World;
let browser: Browser | undefined;
let executablePath: string;

// a first install of chromium with apt takes a minute or two
beforeAll(async () => {
  executablePath = await ensureChromium();
}, 600_000);

beforeAll(async () => {
  world = await World.start({
    config: [
      {
        nodeSubnets: ['10.0.1.0/24'],
        ips: ['10.0.100.2~10.0.100.9'],
        subnet: '10.0.100.0/24',
        gateway: '10.0.100.1',
      },
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await world.stop();
});

test('Swagger UI lists every operation and executes GET /v1/ip against the server', async () => {
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  const failures: string[] = [];
  page.on('pageerror', (err) => failures.push(err.message));
  await page.goto(`${world.floatip.apiUrl}/apidocs/`);
  await page.locator('.swagger-ui .info .title').filter({ hasText: 'floatip REST API' }).waitFor();

  // every documented operation has its block, by path and method
  for (const operation of documentedOperations()) {
    const [method, path] = operation.split(' ') as [string, string];
    await page
      .locator(`.opblock-${method.toLowerCase()} [data-path="${path}"]`)
      .first()
      .waitFor({ state: 'attached' });
  }

  const list = page.locator('#operations-ip-listIPs');
  await list.locator('.opblock-summary').click();
  await list.getByRole('button', { name: 'Try it out' }).click();
  await list.getByRole('button', { name: 'Execute' }).click();
  const status = list.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  expect((await status.innerText()).trim()).toBe('200');
  const shown = await list.locator('.live-responses-table .response-col_description pre').first().innerText();
  expect(JSON.parse(shown)).toMatchObject({ totalElements: 8, first: true, size: 10 });
  // the request it made is the one a user would copy
  expect(await list.locator('.request-url pre').innerText()).toBe(
    `${world.floatip.apiUrl}/v1/ip?page=0&size=10&sort=ip%20asc`,
  );
  expect(failures).toEqual([]);
}, 90_000);
