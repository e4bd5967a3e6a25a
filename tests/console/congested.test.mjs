// Congested is up (docs/OPERATIONS.md "The console", "Metrics": npacd_associations_up): a
// provider bound over three associations that never answer, with congestion_window 1,
// has three requests outstanding and fourteen messages waiting `all-congested`. The
// console counts its three associations as up, colours each one congested, and does not
// list the provider under "Nothing up" — on-call must not be told it is unbound while it
// is only slow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

test('a provider whose three associations are congested shows three up, each coloured congested, and is not listed as having nothing up', { timeout: 60000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  // The browser goes first: npacd's stop waits for its open connections to finish.
  t.after(async () => { await ui?.close(); await npacd.stop(); });
  const key = await npacd.provision('0001', { srr: true });
  await npacd.must('PUT', '/v1/tunables/congestion_window', { value: 1, spid: '0001' }, 200);
  await npacd.sim('0001', key, ['--from', '127.0.0.2', '--from', '127.0.0.3', '--from', '127.0.0.4',
    '--silent', '1', '--silent', '2', '--silent', '3', '--keep-running', '--duration', '55s']);
  await waitUntil('three bound associations', async () => (await npacd.associations()).length === 3);
  await npacd.must('POST', '/v1/messages', { messages: Array.from({ length: 17 }, () => Npacd.message('0001', 'notifications')) }, 201);
  await waitUntil('three congested associations', async () =>
    (await npacd.associations()).filter((a) => a.state === 'congested').length === 3, 15000);

  ui = await openBrowser();
  const { page } = ui;
  await signIn(page, npacd.base, await npacd.createToken('ops-congested', 'operator'));
  await waitUntil('the wait reason', async () => /notifications: all-congested \(14\)/.test(
    await page.locator('[data-waits="0001"]').textContent()), 15000);
  assert.equal(await page.locator('[data-up="0001"]').textContent(), '3');
  // Beside the count, how many are congested, in the congested colour.
  const badge = page.locator('#providers-table .state-congested');
  assert.equal(await badge.textContent(), '3 congested');
  // Nothing is down: the "Nothing up" box is green and names no provider.
  const down = page.locator('[data-glance="down"]');
  assert.match(await down.getAttribute('class'), /\bok\b/);
  assert.match(await down.textContent(), /Every enabled provider has an association up \(1\)/);
  await ui.shot('congested-1-overview', { fullPage: false });

  await page.getByRole('link', { name: 'Show provider 0001' }).click();
  const rows = page.getByRole('table', { name: 'Associations of 0001, live' }).locator('tbody tr');
  await waitUntil('three associations on the page', async () => (await rows.count()) === 3);
  assert.equal(await page.locator('[data-up="0001"]').textContent(), '3');
  const states = page.locator('table.associations .state');
  assert.deepEqual(await states.allTextContents(), ['congested', 'congested', 'congested']);
  assert.deepEqual(await states.evaluateAll((els) => els.map((e) => e.className)),
    ['state state-congested', 'state state-congested', 'state state-congested']);
  // Coloured: not the text colour, and not the colour a bound association gets.
  const colours = await page.evaluate(() => {
    const probe = (cls) => {
      const el = document.createElement('span');
      el.className = cls;
      document.body.append(el);
      const colour = getComputedStyle(el).color;
      el.remove();
      return colour;
    };
    return { congested: probe('state state-congested'), bound: probe('state state-bound'), text: getComputedStyle(document.body).color };
  });
  assert.notEqual(colours.congested, colours.text);
  assert.notEqual(colours.congested, colours.bound);
  await ui.shot('congested-2-provider', { fullPage: false });
  assert.deepEqual(ui.problems, []);
});
