// The storage state at the top of the overview (docs/OPERATIONS.md "The console", "When
// the database stops taking writes"): while the database refuses writes — here its WAL
// made immutable (chattr +i, as tests/npac/npacd/npacd_metrics_test.cc does), so the next write
// fails — the "Storage" box turns red and quotes npacd's reason from GET /ready; once the
// file takes writes again it turns green.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Npacd, openBrowser, signIn, waitUntil } from './harness.mjs';

const chattr = (flag, file) => execFileSync('chattr', [flag, file], { stdio: 'pipe' });

test('while the database refuses writes the storage box at the top of the overview is red and says why', { timeout: 50000 }, async (t) => {
  const npacd = await Npacd.start();
  let ui = null;
  const wal = `${npacd.db}-wal`;
  let immutable = false;
  // The browser goes first: npacd's stop waits for its open connections to finish; the
  // WAL must be writable again before the directory is removed.
  t.after(async () => {
    if (immutable) chattr('-i', wal);
    await ui?.close();
    await npacd.stop();
  });
  await npacd.provision('0001');
  await npacd.must('POST', '/v1/messages', Npacd.message('0001', 'notifications'), 201);  // the WAL exists
  assert.ok(fs.existsSync(wal));

  ui = await openBrowser();
  const { page } = ui;
  await signIn(page, npacd.base, await npacd.createToken('ops-storage', 'operator'));
  const storage = page.locator('[data-glance="storage"]');
  await waitUntil('the storage state', async () => /The database takes writes\./.test(await storage.textContent()), 15000);
  assert.match(await storage.getAttribute('class'), /\bok\b/);

  try {
    chattr('+i', wal);
  } catch (e) {
    t.skip(`cannot make the WAL immutable (not root, or the filesystem refuses): ${e.message}`);
    return;
  }
  immutable = true;
  // Chromium logs each 503 of GET /ready as a console error: expected while it lasts.
  await ui.expectingRefusal(503, async () => {
    const refused = await npacd.call('POST', '/v1/messages', Npacd.message('0001', 'notifications'));
    assert.ok(refused.status >= 500, `a write was accepted: ${refused.status}`);
    await waitUntil('the red storage box', async () => /The database does NOT take writes\./.test(await storage.textContent()) &&
      /database-writable: the database refuses writes/.test(await storage.textContent()), 15000);
    assert.match(await storage.getAttribute('class'), /\bbad\b/);
    await ui.shot('storage-1-not-writable', { fullPage: false });
    chattr('-i', wal);
    immutable = false;
    await npacd.must('POST', '/v1/messages', Npacd.message('0001', 'notifications'), 201);
    // Green once GET /ready answers 200 again; the polls after it answer 200 too.
    await waitUntil('the green storage box again', async () => /The database takes writes\./.test(await storage.textContent()), 15000);
  });
  assert.match(await storage.getAttribute('class'), /\bok\b/);
  assert.deepEqual(ui.problems, []);
});
