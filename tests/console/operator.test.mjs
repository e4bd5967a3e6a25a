// An operator in the console, end to end: npacd with a provider bound by npac-soa-sim over
// three associations with SRR on (NANC 353); the operator signs in, sees the three and the
// round robin of six notifications over them, turns SRR off through the confirmation that
// spells out the consequence and watches two of them go, sees why a queued message waits,
// and reads the audit entry of the toggle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

test('an operator sees three associations and their round robin, turns SRR off and watches two go, sees a queued message\'s wait reason and reads the audit entry', { timeout: 55000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  // The browser goes first: npacd's stop waits for its open connections to finish.
  t.after(async () => { await ui?.close(); await npacd.stop(); });
  const key = await npacd.provision('0001', { srr: true });
  const token = await npacd.createToken('ops-console', 'operator');
  await npacd.sim('0001', key, ['--from', '127.0.0.2', '--from', '127.0.0.3', '--from', '127.0.0.4',
    '--keep-going', '--keep-running', '--duration', '50s']);
  await waitUntil('three bound associations', async () => (await npacd.associations()).length === 3);

  ui = await openBrowser();
  const { page } = ui;
  await signIn(page, npacd.base, token);
  await waitUntil('the sign-in', async () => (await page.locator('#who').textContent()) === 'Signed in as ops-console (operator)');
  // The page reads the event stream when npacd answers it; polling is only its fallback.
  await waitUntil('the event stream', async () => (await page.locator('#live-status').textContent()) === 'live (event stream)');

  await page.getByRole('link', { name: 'Show provider 0001' }).click();
  const associations = page.getByRole('table', { name: 'Associations of 0001, live' }).locator('tbody tr');
  await waitUntil('three associations on the page', async () => (await associations.count()) === 3 &&
    (await page.locator('[data-up="0001"]').textContent()) === '3');
  const peers = await associations.locator('.peer').allTextContents();
  assert.deepEqual(peers.map((p) => p.split(':')[0]).sort(), ['127.0.0.2', '127.0.0.3', '127.0.0.4']);

  // Six notifications leave in strict rotation (NANC 353): the round robin picture shows
  // each association carrying every third one.
  await npacd.must('POST', '/v1/messages', { messages: Array.from({ length: 6 }, () => Npacd.message('0001', 'notifications')) }, 201);
  const picture = page.getByRole('img', { name: /^Round robin/ });
  const picks = await waitUntil('six picks in the round robin picture', async () => {
    const m = /went to associations ([\d ]+)$/.exec(await picture.getAttribute('aria-label', { timeout: 1000 }));
    const ids = m ? m[1].split(' ').map(Number) : [];
    return ids.length === 6 ? ids : null;
  }, 15000);
  assert.deepEqual([...picks.slice(0, 3)].sort(), [1, 2, 3]);
  assert.deepEqual(picks.slice(3), picks.slice(0, 3));
  await picture.scrollIntoViewIfNeeded();
  await ui.shot('operator-1-three-associations');

  // Readable at 1280×800: nothing wider than the window (wide tables scroll in their box).
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
  // Every control has an accessible name: its text, aria-label or <label for>.
  assert.deepEqual(await page.locator('button, input, select').evaluateAll((controls) => controls
    .filter((c) => !(c.getAttribute('aria-label') || c.textContent.trim() || (c.id && document.querySelector(`label[for="${c.id}"]`))))
    .map((c) => c.outerHTML)), []);

  // From the keyboard: Enter opens the confirmation, Escape cancels it and gives the
  // focus back to the switch; nothing changed.
  const toggle = page.getByRole('button', { name: 'Turn SRR off for 0001' });
  await toggle.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog');
  await dialog.waitFor({ state: 'visible' });
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await page.evaluate(() => document.activeElement.dataset.key), 'srr-0001');
  assert.equal((await npacd.must('GET', '/v1/providers', undefined, 200)).providers[0].srr, true);

  await toggle.click();
  await dialog.waitFor({ state: 'visible' });
  assert.match(await dialog.textContent(), /keeps the earliest association and releases the others after their messages move/);
  // The dialog takes the focus, on its safe choice.
  assert.equal(await page.evaluate(() => document.activeElement.id), 'confirm-cancel');
  await ui.shot('operator-2-srr-off-confirmation');
  await dialog.getByRole('button', { name: 'Turn SRR off' }).click();
  await dialog.waitFor({ state: 'hidden' });

  await waitUntil('two associations to go', async () => (await associations.count()) === 1 &&
    (await page.locator('[data-up="0001"]').textContent()) === '1' &&
    (await page.locator('[data-srr="0001"]').textContent()) === 'off', 15000);
  // NANC 353: the earliest-bound association stays.
  assert.match(await associations.locator('.peer').textContent(), /^127\.0\.0\.2:/);
  assert.equal((await npacd.associations()).length, 1);
  // The association log says why they went.
  const log = page.getByRole('table', { name: /association events of 0001/ }).locator('tbody tr');
  await waitUntil('the two releases in the association log', async () =>
    (await log.allTextContents()).filter((row) => /release.*srr-off/.test(row)).length === 2);
  await ui.shot('operator-3-one-association-left');

  // A message for a function no association has cannot leave: the page says why.
  await npacd.must('POST', '/v1/messages', Npacd.message('0001', 'lsms-data-download'), 201);
  await waitUntil('the wait reason', async () => /lsms-data-download: no-association-for-function \(1\)/.test(
    await page.locator('[data-waits="0001"]').textContent()), 15000);
  await ui.shot('operator-4-wait-reason');

  // The audit log is a view of its own (#/audit).
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByLabel('Actor').fill('ops-console');
  await page.getByLabel('Action').fill('tunable.set');
  const audit = page.getByRole('table', { name: /^Audit log/ }).locator('tbody tr');
  await waitUntil('the audit entry of the toggle', async () => {
    const rows = await audit.allTextContents();
    return rows.length === 1 && /ops-console\s*tunable\.set\s*srr@0001\s*on\s*off/.test(rows[0]);
  });
  await page.locator('#audit').scrollIntoViewIfNeeded();
  await ui.shot('operator-5-audit-entry');
  assert.deepEqual(ui.problems, []);
});
