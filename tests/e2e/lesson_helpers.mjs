// Shared by the lesson tests: a keyboard user's moves (Tab to a control, type, answer a
// question with Enter or the arrow keys) and the checks of an answer.
import assert from 'node:assert/strict';

/** Presses Tab until `locator` has the focus (the way a keyboard user reaches it). */
export async function tabTo(page, locator, limit = 250) {
  const handle = await locator.elementHandle();
  for (let i = 0; i < limit; i++) {
    if (await page.evaluate((el) => document.activeElement === el, handle)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${locator}`);
}

/** Types `text` into `input` by keyboard, replacing what it held. */
export async function typeInto(page, input, text) {
  await tabTo(page, input);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.type(text);
}

/** Answers check `id`: a number typed then Enter, or the option at `index` by arrow keys. */
export async function answer(page, id, { number, index }) {
  const form = page.getByTestId(`check-${id}`);
  const field = form.getByTestId('check-answer');
  if (number !== undefined) {
    await typeInto(page, field, String(number));
    await page.keyboard.press('Enter');
  } else {
    await tabTo(page, field);
    // "choose…" is first; each ArrowDown on a closed select moves one option down.
    for (let i = 0; i <= index; i++) await page.keyboard.press('ArrowDown');
    await tabTo(page, form.getByTestId('check-submit'));
    await page.keyboard.press('Enter');
  }
  await page.waitForFunction((id) => document.querySelector(`[data-testid=check-${id}] [data-testid=check-feedback]`)?.textContent.length > 0, id);
  return form.getByTestId('check-feedback').textContent();
}

export async function expectRight(page, id, given) {
  const feedback = await answer(page, id, given);
  assert.match(feedback, /^Right\./, `${id}: ${feedback}`);
  await page.getByTestId(`check-${id}`).getByTestId('check-solved').waitFor();
}

export async function next(page, id) {
  await tabTo(page, page.getByTestId('lesson-next'));
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => document.querySelector('[data-testid=lesson]')?.dataset.lesson === id, id);
}
