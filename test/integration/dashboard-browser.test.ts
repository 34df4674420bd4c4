// The dashboard in a real browser: Debian's chromium, driven headless by playwright-core, against
// floatip on the embedded API server (as swagger-ui.test.ts does). The page's numbers are those of
// /v1/subnets, its search finds a pod, it follows an allocation without a reload, a release from
// it asks first and then works, and under --api-auth=kubernetes it asks for a token and a release
// is refused for a caller who may not delete FloatingIPs; the dialog that asks stays on the screen
// with a key thousands of characters long, and Escape or its backdrop cancel it. The last test
// takes the README's screenshots (into docs/ with FLOATIP_SCREENSHOTS=docs: `npm run screenshots`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type Locator, type Page, chromium } from 'playwright-core';
import { packagePath } from '../../src/paths.js';
import { CHROMIUM_ARGS, ensureChromium } from './chromium.js';
import { DASHBOARD_CONFIG, type Seeded, runningPod, seed, seedPool, shopPod } from './dashboard-world.js';
import { eventually } from './helpers.js';
import { World } from './world.js';

let browser: Browser;
let world: World;
let seeded: Seeded;
/** How far floatip's clock is ahead of the wall clock (the screenshots show a measured rate). */
let later = 0;

// a first install of chromium with apt takes a minute or two
beforeAll(async () => {
  const executablePath = await ensureChromium();
  // the page as `npm run build` bundles it, served from dist/dashboard/
  execFileSync('npm', ['run', '--silent', 'build:dashboard'], { cwd: packagePath(), stdio: 'pipe' });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, 600_000);

beforeAll(async () => {
  world = await World.start({ config: DASHBOARD_CONFIG, clock: () => Date.now() + later });
  seeded = await seed(world);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** What went wrong on each page open: script errors, requests to anywhere but floatip. */
const problems = new Map<Page, string[]>();

/** A fresh page on the dashboard; close() fails the test on any script error or request elsewhere. */
async function open(url: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const seen: string[] = [];
  problems.set(page, seen);
  const origin = new URL(url).origin;
  page.on('pageerror', (err) => seen.push(err.message));
  page.on('request', (req) => {
    if (!req.url().startsWith(origin)) seen.push(`the page asked ${req.url()}: it must work offline`);
  });
  await page.goto(`${url}/`);
  return page;
}

async function close(page: Page): Promise<void> {
  await page.close();
  expect(problems.get(page)).toEqual([]);
}

const table = (page: Page, name: string) => page.getByRole('table', { name, exact: true });
const usageCard = (page: Page, title: string) => page.getByRole('article', { name: title, exact: true });
const shown = async (page: Page, card: string, part: string) =>
  Number((await usageCard(page, card).locator(`dd[data-count="${part}"]`).innerText()).replace(/,/g, ''));

/** The row of a table whose IP cell is exactly `ip`. */
const rowOf = (page: Page, name: string, ip: string) =>
  table(page, name)
    .locator('tbody tr')
    .filter({
      has: page.locator('td[data-label="IP"]', { hasText: new RegExp(`^${ip.replace(/\./g, '\\.')}$`) }),
    });

/** Release, then confirm. */
async function releaseFromPage(page: Page, name: string, ip: string): Promise<void> {
  await rowOf(page, name, ip).getByRole('button', { name: 'Release' }).click();
  await page
    .getByRole('dialog', { name: `Release ${ip}?` })
    .getByRole('button', { name: `Release ${ip}` })
    .click();
}

const alert = (page: Page, text: string) => page.getByRole('alert').filter({ hasText: text }).waitFor();

test('the subnet and pool bars show what /v1/subnets counts', async () => {
  const page = await open(world.floatip.apiUrl);
  await usageCard(page, '10.0.100.0/24').waitFor();
  const { content } = (await world.rest('GET', '/v1/subnets')).json as {
    content: { entries: { allocated: number; reserved: number; free: string }[] };
  };
  const entry = content.entries[0]!;
  const [used, parked, reserved, free] = await Promise.all(
    ['used', 'parked', 'reserved', 'free'].map((p) => shown(page, '10.0.100.0/24', p)),
  );
  expect(used! + parked! + reserved!).toBe(entry.allocated);
  expect(reserved).toBe(entry.reserved);
  expect(free).toBe(Number(entry.free));
  expect([used, parked, reserved]).toEqual([2, 3, 1]);
  await usageCard(page, 'pool p1').waitFor();
  expect(await shown(page, 'pool p1', 'parked')).toBe(2);
  await close(page);
});

test('the search finds a pod; a column sorts on a click, and back', async () => {
  const page = await open(world.floatip.apiUrl);
  const holders = table(page, 'Holders');
  await holders.waitFor();
  expect(await holders.locator('tbody tr').count()).toBe(6);
  await page.getByRole('searchbox', { name: 'Search' }).fill('solo');
  await eventually(
    'the search to narrow the table',
    async () => (await holders.locator('tbody tr').count()) === 1,
  );
  expect(await holders.locator('tbody tr td[data-label="Pod"]').innerText()).toBe('ns1/solo');
  expect(await holders.locator('tbody tr td[data-label="IP"]').innerText()).toBe(seeded.running.solo);

  await page.getByRole('searchbox', { name: 'Search' }).fill('');
  await eventually('the whole table again', async () => (await holders.locator('tbody tr').count()) === 6);
  const keys = () => holders.locator('tbody td[data-label="Key"]').allInnerTexts();
  await holders.getByRole('button', { name: 'Key' }).click();
  const ascending = await keys();
  expect(ascending).toEqual([...ascending].sort());
  await holders.getByRole('button', { name: 'Key' }).click();
  expect(await keys()).toEqual([...ascending].reverse());
  await close(page);
});

test('it follows an allocation live, without reloading', async () => {
  const page = await open(world.floatip.apiUrl);
  await table(page, 'Holders').waitFor();
  const usedBefore = await shown(page, '10.0.100.0/24', 'used');
  let loads = 0;
  page.on('load', () => loads++);
  await page.evaluate("window.marker = 'still here'");
  const ip = await runningPod(world, { name: 'late' });
  await table(page, 'Holders').locator('td[data-label="IP"]', { hasText: ip }).waitFor({ timeout: 10_000 });
  expect(await shown(page, '10.0.100.0/24', 'used')).toBe(usedBefore + 1);
  expect(await page.evaluate('window.marker')).toBe('still here');
  expect(loads).toBe(0);
  await close(page);
});

test('a release from the page asks first, then releases', async () => {
  const page = await open(world.floatip.apiUrl);
  const row = rowOf(page, 'Parked', seeded.parked);
  await row.getByRole('button', { name: 'Release' }).click();
  const dialog = page.getByRole('dialog', { name: `Release ${seeded.parked}?` });
  await expect(dialog.innerText()).resolves.toContain('dp_ns1_shop_');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  expect(world.floatip.allocator.get(seeded.parked)?.key).toBe('dp_ns1_shop_');

  await releaseFromPage(page, 'Parked', seeded.parked);
  await alert(page, `released ${seeded.parked}`);
  expect(world.floatip.allocator.get(seeded.parked)).toBeUndefined();
  await row.waitFor({ state: 'detached' });
  // running pods' addresses offer no release
  const solo = rowOf(page, 'Holders', seeded.running.solo!);
  expect(await solo.count()).toBe(1);
  expect(await solo.getByRole('button', { name: 'Release' }).count()).toBe(0);
  await close(page);
});

describe('with --api-auth=kubernetes', () => {
  let guarded: World;

  beforeAll(async () => {
    guarded = await World.start({
      config: DASHBOARD_CONFIG,
      auth: {
        tokens: { 't-viewer': { username: 'viewer' }, 't-ops': { username: 'ops' } },
        grants: {
          viewer: ['list galaxy.k8s.io/floatingips'],
          ops: [
            'list galaxy.k8s.io/floatingips',
            'delete galaxy.k8s.io/floatingips',
            'update galaxy.k8s.io/pools',
          ],
        },
      },
    });
    await seedPool(guarded, { Authorization: 'Bearer t-ops' });
  }, 60_000);

  afterAll(async () => {
    await guarded?.stop();
  });

  const useToken = async (page: Page, token: string) => {
    await page.getByLabel(/Bearer token/).fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
  };

  test('the page asks for a token; a release needs delete floatingips, as POST /v1/ip does', async () => {
    const page = await open(guarded.floatip.apiUrl);
    await page.getByRole('status').filter({ hasText: 'unauthorized: send a bearer token' }).waitFor();
    expect(await table(page, 'Parked').count()).toBe(0);
    await useToken(page, 't-viewer');
    const first = table(page, 'Parked').locator('tbody tr', { hasText: 'pool__p1_' }).first();
    await first.waitFor();
    const ip = await first.locator('td[data-label="IP"]').innerText();

    await releaseFromPage(page, 'Parked', ip);
    await alert(
      page,
      `${ip} was not released (403): forbidden: viewer may not delete floatingips.galaxy.k8s.io`,
    );
    expect(guarded.floatip.allocator.get(ip)?.key).toBe('pool__p1_');

    await useToken(page, 't-ops');
    await releaseFromPage(page, 'Parked', ip);
    await alert(page, `released ${ip}`);
    expect(guarded.floatip.allocator.get(ip)).toBeUndefined();
    await close(page);
  });
});

describe('with hostile object data', () => {
  let hostile: World;
  const IP = '10.0.100.30';
  const BIDI_IP = '10.0.100.31';
  const LONG_IP = '10.0.100.32';
  // anyone who may create pods chooses such a key, through the eni-ip-pool annotation
  const LONG_KEY = 'pool__' + 'c'.repeat(5000) + '_';
  const marker = `"><img src=x onerror="window.pwned=1"><script>window.pwned=2</script>`;

  beforeAll(async () => {
    hostile = await World.start({ config: DASHBOARD_CONFIG });
    // whoever may write FloatingIPs chooses the node name in the attribute: markup, and a megabyte
    // with no place to break
    await hostile.createFloatingIP(IP, {
      key: 'dp_ns1_gone_',
      attribute: JSON.stringify({ NodeName: marker + 'n'.repeat(1 << 20), Uid: '' }),
    });
    // and the key: a right-to-left override makes what follows read backwards
    await hostile.createFloatingIP(BIDI_IP, { key: 'pool__\u202egnp.exe_' });
    await hostile.createFloatingIP(LONG_IP, { key: LONG_KEY });
    await eventually(
      `${IP}, ${BIDI_IP} and ${LONG_IP} to reach floatip`,
      async () =>
        hostile.floatip.allocator.get(IP) !== undefined &&
        hostile.floatip.allocator.get(BIDI_IP) !== undefined &&
        hostile.floatip.allocator.get(LONG_IP) !== undefined,
    );
  }, 60_000);

  afterAll(async () => {
    await hostile?.stop();
  });

  test('is shown as text, and a megabyte-long node name leaves every row its Release button in sight', async () => {
    const page = await open(hostile.floatip.apiUrl);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const row = rowOf(page, 'Holders', IP);
    await row.waitFor();
    expect(await row.locator('td[data-label="Node"]').innerText()).toContain(marker);
    expect(await page.evaluate('[window.pwned, document.querySelectorAll("img").length]')).toEqual([
      undefined,
      0,
    ]);
    // the row's last cells are on the screen, not millions of pixels to the right
    const button = await row.getByRole('button', { name: 'Release' }).boundingBox();
    expect(button!.x + button!.width).toBeLessThanOrEqual(1280);
    const state = await row.locator('td[data-label="State"]').boundingBox();
    expect(state!.x + state!.width).toBeLessThanOrEqual(1280);
    expect(dialogs).toEqual([]);
    await close(page);
  }, 60_000);

  test('a bidirectional override in a key is written out, in the table and in the dialog that asks before a release', async () => {
    const page = await open(hostile.floatip.apiUrl);
    const row = rowOf(page, 'Holders', BIDI_IP);
    await row.waitFor();
    expect(await row.locator('td[data-label="Key"]').innerText()).toBe('pool__\\u202egnp.exe_');
    await row.getByRole('button', { name: 'Release' }).click();
    const dialog = page.getByRole('dialog', { name: `Release ${BIDI_IP}?` });
    expect(await dialog.innerText()).toContain('pool__\\u202egnp.exe_');
    expect(await dialog.innerText()).not.toContain('\u202e');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await close(page);
  }, 60_000);

  test('a 5,000-character key leaves the dialog that asks before a release answerable: its buttons in sight, Escape and the backdrop cancel, focus goes in and back', async () => {
    const page = await open(hostile.floatip.apiUrl);
    const opener = rowOf(page, 'Holders', LONG_IP).getByRole('button', { name: 'Release' });
    const dialog = page.getByRole('dialog', { name: `Release ${LONG_IP}?` });
    const cancel = dialog.getByRole('button', { name: 'Cancel' });
    const confirm = dialog.getByRole('button', { name: `Release ${LONG_IP}` });
    const hasFocus = (l: Locator) => l.evaluate((el) => el === el.ownerDocument.activeElement);
    /** On the 1280x900 screen as it is, and what a click at its middle reaches. */
    const inSight = async (l: Locator) => {
      const box = (await l.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(1280);
      expect(box.y + box.height).toBeLessThanOrEqual(900);
      const hit = await l.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return el.contains(el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
      });
      expect(hit).toBe(true);
    };
    const unreleased = () => expect(hostile.floatip.allocator.get(LONG_IP)?.key).toBe(LONG_KEY);

    await opener.click();
    await dialog.waitFor();
    await inSight(cancel);
    await inSight(confirm);
    // the whole key is there to read, scrolled to inside the dialog
    expect(await dialog.innerText()).toContain(LONG_KEY);
    expect(await hasFocus(cancel)).toBe(true);

    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    unreleased();
    expect(await hasFocus(opener)).toBe(true);

    await opener.click();
    await dialog.waitFor();
    // selecting the key's text and letting go over the backdrop keeps the dialog
    const text = (await dialog.locator('code').boundingBox())!;
    await page.mouse.move(text.x + 20, text.y + 10);
    await page.mouse.down();
    await page.mouse.move(5, 5, { steps: 5 });
    await page.mouse.up();
    expect(await dialog.count()).toBe(1);
    // a click on the backdrop cancels
    await page.mouse.click(5, 5);
    await dialog.waitFor({ state: 'detached' });
    unreleased();
    expect(await hasFocus(opener)).toBe(true);

    await opener.click();
    await cancel.click();
    await dialog.waitFor({ state: 'detached' });
    unreleased();
    expect(await hasFocus(opener)).toBe(true);

    await opener.click();
    await confirm.click();
    await alert(page, `released ${LONG_IP}`);
    expect(hostile.floatip.allocator.get(LONG_IP)).toBeUndefined();
    await close(page);
  }, 60_000);
});

test('screenshots at desktop and phone widths; on a phone nothing is wider than the screen', async () => {
  await world.deployment('web', 6);
  for (const suffix of ['x7k2p', 'b9d4q', 'm3n8r', 'c5t1w', 'h6v0z', 'q2j9s'])
    await runningPod(world, {
      name: `web-7c9f8d6b5-${suffix}`,
      owner: { kind: 'ReplicaSet', name: 'web-7c9f8d6b5' },
    });
  await runningPod(world, shopPod('b'));
  // twenty minutes on, the rate of the last twenty is known
  later += 20 * 60_000;
  const dir =
    process.env.FLOATIP_SCREENSHOTS === 'docs'
      ? packagePath('docs')
      : mkdtempSync(path.join(tmpdir(), 'floatip-shots-'));
  for (const [name, viewport] of [
    ['desktop', { width: 1280, height: 1000 }],
    ['phone', { width: 390, height: 844 }],
  ] as const) {
    const page = await open(world.floatip.apiUrl, viewport);
    await table(page, 'Holders').locator('tbody tr').nth(9).waitFor();
    await page
      .getByText(/runs out in/)
      .first()
      .waitFor();
    const width = await page.evaluate('document.documentElement.scrollWidth');
    expect(width).toBeLessThanOrEqual(viewport.width);
    await page.screenshot({ path: path.join(dir, `dashboard-${name}.png`), fullPage: name === 'desktop' });
    await close(page);
  }
}, 60_000);
