// A model that fails to download or is corrupt must give a message in the page, not a dead tab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, DIST } from './harness.mjs';

const MINUTE = 60_000;
const WEIGHTS = '/models/all-MiniLM-L6-v2-int8/model.safetensors';

async function loadError(faults) {
  const server = await serve({ faults });
  const chrome = await launch({ webgpu: false });
  try {
    await chrome.page.goto(server.origin + '/');
    const banner = chrome.page.getByTestId('load-error');
    await banner.waitFor({ timeout: 3 * MINUTE });
    // The page is still alive: typing still works and nothing panicked.
    await chrome.page.getByTestId('sentence-a').fill('still responsive');
    assert.deepEqual(chrome.problems.filter((p) => !p.includes('404')), []);
    return await banner.textContent();
  } finally {
    await chrome.browser.close();
    await server.close();
  }
}

test('a missing weights file is reported with its name and status', { timeout: 4 * MINUTE }, async () => {
  const msg = await loadError({ [WEIGHTS]: { status: 404, body: 'gone' } });
  assert.match(msg, /model\.safetensors/);
  assert.match(msg, /HTTP 404/);
});

test('a truncated weights file is reported as truncated', { timeout: 4 * MINUTE }, async () => {
  const full = await readFile(join(DIST, WEIGHTS));
  const msg = await loadError({ [WEIGHTS]: { body: full.subarray(0, full.length >> 1) } });
  assert.match(msg, /truncated/);
});
