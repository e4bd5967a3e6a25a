// The console's fallback: when GET /v1/events is not answered with an event stream (here
// refused 503 as npacd refuses a connection over its limits, docs/API.md "Connection
// limits"), the page says it polls and still shows an association that binds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

test('when npacd answers no event stream the page polls and still shows an association bind', { timeout: 40000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  // The browser goes first: npacd's stop waits for its open connections to finish.
  t.after(async () => { await ui?.close(); await npacd.stop(); });
  const key = await npacd.provision('0001');

  ui = await openBrowser();
  const { page } = ui;
  // Only the event stream is refused, in the browser; every other call reaches npacd.
  await page.route('**/v1/events*', (route) => route.fulfill({
    status: 503, contentType: 'application/json', headers: { 'Retry-After': '1' },
    body: JSON.stringify({ error: { code: 'too_many_connections_per_credential', message: 'refused by the test' } }),
  }));
  await ui.expectingRefusal(503, async () => {
    await signIn(page, npacd.base, await npacd.createToken('ops-polling', 'operator'));
    await waitUntil('the polling', async () => /^live \(polling every 2 s/.test(await page.locator('#live-status').textContent()));
    assert.equal(await page.locator('[data-up="0001"]').textContent(), '0');
    await npacd.sim('0001', key, ['--from', '127.0.0.2', '--keep-running', '--duration', '30s']);
    await waitUntil('the bind on the page', async () => (await page.locator('[data-up="0001"]').textContent()) === '1', 15000);
  });
  await ui.shot('polling-1-association-up');
  assert.deepEqual(ui.problems, []);
});
