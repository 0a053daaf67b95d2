// Regenerates docs/screens/<tab>-<width>.png: each tab of the built page (dist/) at a phone's,
// a tablet's and a projector's width, after its first view has drawn; lesson 9's table on a
// phone; presentation mode on a projector (lesson 3, attention) and the printed handout of
// lesson 6 (`handout-senses.pdf` and its first page as a picture).
//
//   cargo xtask dist && node scripts/screens.mjs
import { join } from 'node:path';
import { serve, launch, ROOT } from '../tests/e2e/harness.mjs';

const SIZES = [[390, 844], [768, 1024], [1920, 1080]];
const TABS = [['lessons', '#lesson=tokens', 'lesson-tokens'], ['explore', '#explore', 'attention-heatmap'], ['studio', '#studio', 'studio-data'], ['lab', '#lab', 'lab-estimate']];

const server = await serve();
const chrome = await launch({ webgpu: false });
const { page } = chrome;
try {
  for (const [width, height] of SIZES) {
    await page.setViewportSize({ width, height });
    for (const [name, hash, drawn] of TABS) {
      await page.goto(`${server.origin}/${hash}`);
      await page.reload();
      await page.getByTestId('model-facts').waitFor({ state: 'attached', timeout: 5 * 60_000 });
      await page.getByTestId(drawn).first().waitFor({ timeout: 3 * 60_000 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(ROOT, 'docs', 'screens', `${name}-${width}.png`) });
      console.log(`${name}-${width}.png`);
    }
  }
  // Lesson 9's table on a phone, with its cue to scroll sideways.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${server.origin}/#lesson=sizes`);
  await page.getByTestId('lesson-sizes').waitFor({ timeout: 3 * 60_000 });
  await page.getByTestId('lesson-sizes').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(ROOT, 'docs', 'screens', 'lesson-sizes-390.png') });
  // Presentation mode on a projector: lesson 3 with its heatmap at the projector's size, and the
  // step to the next lesson (→), which starts at its title.
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.goto(`${server.origin}/#lesson=attention`);
  await page.getByTestId('lesson-attention').first().waitFor({ timeout: 3 * 60_000 });
  await page.getByTestId('lesson-present').click();
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(ROOT, 'docs', 'screens', 'present-attention-1920.png') });
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('[data-testid=lesson]')?.dataset.lesson === 'masking');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(ROOT, 'docs', 'screens', 'present-masking-1920.png') });
  await page.keyboard.press('Escape');
  // The printed handout of lesson 6, after its view has drawn.
  await page.goto(`${server.origin}/#lesson=senses`);
  await page.getByTestId('check-senses-best-layer').getByTestId('check-print-options').waitFor({ state: 'attached', timeout: 3 * 60_000 });
  await page.evaluate(() => document.querySelectorAll('[data-testid=lesson] details.maths').forEach((d) => { d.open = true; }));
  await page.pdf({ path: join(ROOT, 'docs', 'screens', 'handout-senses.pdf'), format: 'A4', printBackground: true });
  await page.emulateMedia({ media: 'print' });
  await page.setViewportSize({ width: 794, height: 1123 });
  await page.screenshot({ path: join(ROOT, 'docs', 'screens', 'handout-senses.png'), fullPage: true });
  await page.emulateMedia({ media: 'screen' });
  console.log('lesson-sizes-390.png, present-attention-1920.png, present-masking-1920.png, handout-senses.pdf/.png');
} finally {
  await chrome.browser.close();
  await server.close();
}
