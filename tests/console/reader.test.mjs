// A reader in the console: the SRR switch is disabled for it, and when the request is
// forced anyway npacd refuses it (403) and the page shows npacd's reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

test('a reader cannot toggle SRR: the switch is disabled and a forced request is refused 403', { timeout: 50000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  // The browser goes first: npacd's stop waits for its open connections to finish.
  t.after(async () => { await ui?.close(); await npacd.stop(); });
  await npacd.provision('0001');
  const token = await npacd.createToken('dash', 'reader');

  ui = await openBrowser();
  const { page } = ui;
  await signIn(page, npacd.base, token);
  await waitUntil('the sign-in', async () => (await page.locator('#who').textContent()) === 'Signed in as dash (reader)');
  const toggle = page.getByRole('button', { name: 'Turn SRR on for 0001' });
  await toggle.waitFor();
  assert.equal(await toggle.isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Disable 0001' }).isDisabled(), true);
  assert.match(await page.locator('#read-only-note').textContent(), /reader role cannot change anything/);
  await ui.shot('reader-1-disabled-switches');

  await ui.expectingRefusal(403, async () => {
    // Enabled and clicked in one go: a live update re-renders the switch disabled again.
    await page.evaluate(() => {
      const b = document.querySelector('[data-key="srr-0001"]');
      b.disabled = false;
      b.click();
    });
    await page.getByRole('dialog').getByRole('button', { name: 'Turn SRR on' }).click();
    await waitUntil('the refusal on the page', async () => /npacd answered 403 forbidden: PUT \/v1\/providers\/0001\/srr needs the operator role; token 'dash' has the reader role/.test(
      await page.getByRole('alert').filter({ hasText: '403' }).textContent()));
  });
  await ui.shot('reader-2-forced-request-refused');
  const providers = (await npacd.must('GET', '/v1/providers', undefined, 200)).providers;
  assert.equal(providers[0].srr, false);
  assert.deepEqual(ui.problems, []);
});
