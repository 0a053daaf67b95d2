// Renders public/favicon.svg to the PNG icons the web manifest names (192 and 512 px, plus a
// maskable 512 px one with the safe-zone padding), with the tests' headless Chromium.
//   (cd tests/e2e && npm ci) && node scripts/make_icons.mjs
import { createRequire } from 'node:module';
import { readFile, writeFile } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { chromium } = createRequire(join(root, 'tests/e2e/package.json'))('playwright-core');
const svg = await readFile(join(root, 'public/favicon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
const page = await browser.newPage();
for (const [name, size, pad] of [['icon-192.png', 192, 0], ['icon-512.png', 512, 0], ['icon-maskable-512.png', 512, 0.1]]) {
  await page.setViewportSize({ width: size, height: size });
  const inner = Math.round(size * (1 - 2 * pad));
  const background = pad ? '#2f6fde' : 'transparent';
  await page.setContent(`<body style="margin:0;background:${background};display:grid;place-items:center;height:${size}px">
    <div style="width:${inner}px;height:${inner}px">${svg.replace('<svg ', `<svg width="${inner}" height="${inner}" `)}</div></body>`);
  await writeFile(join(root, 'public/icons', name), await page.screenshot({ omitBackground: !pad }));
}
await browser.close();
