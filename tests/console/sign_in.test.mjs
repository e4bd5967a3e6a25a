// Signing in to the console with a token npacd does not know: npacd refuses it (401), the
// page says why, keeps the token nowhere and shows none of the data views.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

test('a wrong token is refused at sign-in with npacd\'s reason', { timeout: 40000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  // The browser goes first: npacd's stop waits for its open connections to finish.
  t.after(async () => { await ui?.close(); await npacd.stop(); });

  ui = await openBrowser();
  const { page } = ui;
  await ui.expectingRefusal(401, async () => {
    await signIn(page, npacd.base, `npac_${'0'.repeat(64)}`);
    await waitUntil('the refusal', async () => /^Sign-in refused: npacd answered 401 unauthenticated: GET \/v1\/whoami: unknown token/.test(
      await page.locator('#sign-in-error').textContent()));
  });
  assert.equal(await page.locator('#app').isHidden(), true);
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  await ui.shot('sign-in-1-wrong-token');
  assert.deepEqual(ui.problems, []);
});
