// Shared by the lab's tests: a small corpus, choosing a setting and training by keyboard, and
// the rows of "Runs compared" as the page shows them.
import assert from 'node:assert/strict';
import { tabTo } from './lesson_helpers.mjs';

const MINUTE = 60_000;

// 96 short lines, 3 steps of 32 an epoch: each run is a few seconds of training.
const ANIMALS = ['cow', 'duck', 'horse', 'sheep', 'goat', 'hen', 'pig', 'dog'];
const FOODS = ['grass', 'corn', 'hay', 'seeds', 'apples', 'bread'];
export const farmCorpus = () => Array.from({ length: 96 }, (_, i) => `the ${ANIMALS[i % 8]} eats ${FOODS[i % 6]} in the morning and sleeps in the barn at night.`).join('\n');

/** Chooses the option of select `testid` whose value is `value` with the arrow keys, as a keyboard
 * user does (each ArrowDown or ArrowUp on a closed select moves one option and fires change). */
export async function chooseByKeys(page, testid, value) {
  const select = page.getByTestId(testid);
  const values = await select.evaluate((s) => [...s.options].map((o) => o.value));
  const from = values.indexOf(await select.inputValue());
  const to = values.indexOf(value);
  assert.ok(to >= 0, `${testid} has no option ${value}: ${values}`);
  await tabTo(page, select);
  for (let i = 0; i < Math.abs(to - from); i++) await page.keyboard.press(to > from ? 'ArrowDown' : 'ArrowUp');
  assert.equal(await select.inputValue(), value);
}

/** Starts a lab run with the keyboard and waits until it is kept as row `rows` of the comparison,
 * after its 24 steps. */
export async function trainKept(page, rows) {
  await tabTo(page, page.getByTestId('lab-start'));
  await page.keyboard.press('Enter');
  try {
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=lab-compare-row]').length === n
      || document.querySelector('[data-testid=lab-failed], [data-testid=lab-message].err'), rows, { timeout: 4 * MINUTE });
  } catch (e) {
    throw new Error(`${e.message}\nthe lab shows: ${await page.getByTestId('lab-panel').innerText()}`);
  }
  assert.equal(await page.locator('[data-testid=lab-failed]').count(), 0, await page.getByTestId('lab-panel').innerText());
  assert.match(await page.getByTestId('lab-done').textContent(), /^Finished after 24 steps/);
}

/** The rows of "Runs compared" as the page shows them (`downstream` NaN before "Fine-tune each"). */
export async function keptRows(page) {
  return page.getByTestId('lab-compare-row').evaluateAll((trs) => trs.map((tr) => ({
    name: tr.querySelector('th').textContent,
    cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
    params: Number(tr.dataset.params),
    loss: tr.dataset.loss,
    accuracy: tr.dataset.accuracy,
    learned: Number(tr.querySelector('td[data-learned]').dataset.learned),
    downstream: Number(tr.querySelector('td[data-downstream]')?.dataset.downstream),
  })));
}
