// The egress throttle groups in the console (throttle_groups.js): npacd with provider 0001
// bound by npac-soa-sim and 0002 provisioned, both members of group bureau-a made through
// the API. The view lists the group with its members and level, opens it with its limits
// and this node's row, follows a change made meanwhile through the API without a reload,
// and the provider view of a member names its group.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

let npacd = null;
let ui = null;
let page = null;
let node = null;

before(async () => {
  npacd = await Npacd.start();
  const key = await npacd.provision('0001');
  await npacd.must('POST', '/v1/providers', { spid: '0002', name: 'Provider 0002', system_type: 'soa' }, 201);
  await npacd.sim('0001', key, ['--from', '127.0.0.2', '--keep-running', '--duration', '60s']);
  await waitUntil('0001 bound', async () => (await npacd.associations()).length === 1);
  await npacd.must('POST', '/v1/throttle-groups', { name: 'bureau-a', members: ['0001', '0002'], max_rate: 100, max_pending: 40 }, 201);
  node = (await npacd.must('GET', '/v1/throttle-groups/bureau-a', undefined, 200)).node;
  ui = await openBrowser();
  page = ui.page;
  await signIn(page, npacd.base, await npacd.createToken('ops-groups', 'reader'));
  await waitUntil('the sign-in', async () => (await page.locator('#who').textContent()) === 'Signed in as ops-groups (reader)');
});

// The browser goes first: npacd's stop waits for its open connections to finish.
after(async () => { await ui?.close(); await npacd?.stop(); });

// The cells of the row of the table captioned `caption` whose first cell is `first`.
async function row(caption, first) {
  const rows = await page.getByRole('table', { name: caption }).locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.cells].map((td) => td.textContent.trim())));
  return rows.find((cells) => cells[0] === first) ?? null;
}

test('the throttle groups view lists a group with its members, limits and level', { timeout: 30000 }, async () => {
  await page.getByRole('link', { name: 'Throttle groups' }).click();
  await waitUntil('the view\'s URL', async () => (await page.evaluate(() => location.hash)) === '#/throttle-groups');
  await waitUntil('the overview hidden', async () => page.locator('#overview').isHidden());
  const cells = await waitUntil('bureau-a listed with its level', async () => {
    const r = await row(/^Throttle groups: 1 provisioned/, 'bureau-a');
    return r && r[4] !== '—' ? r : null;
  }, 15000);
  assert.deepEqual(cells, ['bureau-a', '0001, 0002', '100', '40', '0 (none)', '100', '40', 'none']);
  assert.equal(await page.evaluate(() => document.title), 'Throttle groups — npacd console');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
});

test('an open group shows its level, limits against the effective maxima and this node\'s row', { timeout: 30000 }, async () => {
  await page.getByRole('link', { name: 'Show throttle group bureau-a' }).click();
  await waitUntil('the group\'s URL', async () => (await page.evaluate(() => location.hash)) === '#/throttle-groups/bureau-a');
  await waitUntil('the group\'s title', async () => (await page.locator('#throttle-group-title').count()) === 1);
  const facts = await page.locator('#throttle-groups dl.facts').textContent();
  assert.match(facts, /Level0 \(none\)/);
  assert.match(facts, /Members0001, 0002/);
  assert.match(facts, new RegExp(`On node${node}`));
  assert.equal(await page.locator('[data-unreachable="bureau-a"]').textContent(), 'none');
  assert.deepEqual(await row(/^Limits of bureau-a/, 'Rate (msg/s)'), ['Rate (msg/s)', '100', '100', '0', '100']);
  assert.deepEqual(await row(/^Limits of bureau-a/, 'Pending'), ['Pending', '40', '40', '0', '40']);
  const mine = await row(/^Nodes of bureau-a/, `${node} (this node)`);
  assert.ok(mine, 'no row for this node');
  assert.deepEqual([mine[2], mine[3], mine[5]], ['0', 'no', 'yes']);
  assert.deepEqual(await row(/^Levels of bureau-a/, '1'), ['1', '100 %', '80 %']);
  assert.equal(await page.evaluate(() => document.title), 'Throttle group bureau-a — npacd console');
  await ui.shot('throttle-groups-1-open-group');
});

test('a change made through the API meanwhile shows without a reload', { timeout: 30000 }, async () => {
  await npacd.must('PUT', '/v1/throttle-groups/bureau-a', { max_rate: 50 }, 200);
  await waitUntil('the new maxima', async () => {
    const r = await row(/^Limits of bureau-a/, 'Rate (msg/s)');
    return r && r[1] === '50' && r[2] === '50';
  }, 15000);
});

test('a group the URL names that is not provisioned is said so', { timeout: 20000 }, async () => {
  await page.goto(`${npacd.base}/console/#/throttle-groups/nobody`);
  await waitUntil('the refusal', async () =>
    /No throttle group named nobody is provisioned\./.test(await page.locator('#throttle-groups-body').textContent()), 15000);
});

test('a member provider\'s view names its throttle group and level', { timeout: 30000 }, async () => {
  await page.goto(`${npacd.base}/console/#/providers/0001`);
  const group = page.locator('[data-throttle-group="0001"]');
  await waitUntil('the group on the provider view', async () => (await group.count()) === 1, 15000);
  assert.equal(await group.textContent(), 'throttle group bureau-a (level 0)');
  await group.click();
  await waitUntil('the group\'s view', async () => (await page.evaluate(() => location.hash)) === '#/throttle-groups/bureau-a');
  await ui.shot('throttle-groups-2-from-provider', { fullPage: false });
  assert.deepEqual(ui.problems, []);
});
