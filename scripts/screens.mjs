// Regenerates docs/screens/<tab>-<width>.png: each tab of the built page (dist/) at a phone's,
// a tablet's and a projector's width, after its first view has drawn.
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
} finally {
  await chrome.browser.close();
  await server.close();
}
