// The console's live view ends with its token: revoking the signed-in token ends the
// event stream (`event: end`), and the page signs out with npacd's reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

test('revoking the signed-in token signs the page out with npacd\'s reason', { timeout: 40000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  // The browser goes first: npacd's stop waits for its open connections to finish.
  t.after(async () => { await ui?.close(); await npacd.stop(); });
  await npacd.provision('0001');
  const token = await npacd.createToken('ops-leaving', 'operator');

  ui = await openBrowser();
  const { page } = ui;
  await signIn(page, npacd.base, token);
  await waitUntil('the event stream', async () => (await page.locator('#live-status').textContent()) === 'live (event stream)');
  await ui.expectingRefusal(401, async () => {
    await npacd.must('POST', '/v1/tokens/ops-leaving/revoke', undefined, 200);
    await waitUntil('the sign-out', async () => /^npacd ended the session: token 'ops-leaving' was revoked at /.test(
      await page.locator('#sign-in-error').textContent()), 15000);
    // Calls the page had in flight then are answered 401 as well: let them land first.
    await ui.settled();
  });
  assert.equal(await page.locator('#app').isHidden(), true);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  assert.equal(await page.locator('#live-status').textContent(), 'not connected');
  await ui.shot('revoke-1-signed-out');
  assert.deepEqual(ui.problems, []);
});
