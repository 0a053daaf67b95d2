// The page's Content-Security-Policy: no inline script but the wasm loader (pinned by hash), no
// eval, no connection to another origin; and text a user types or uploads is shown as text, never
// parsed as HTML.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, screenshot, DIST } from './harness.mjs';

const MINUTE = 60_000;
const ATTACK = '<img src="x" onerror="window.__pwned = 1"><b>bold</b><script>window.__pwned = 2</script>';
let server, elsewhere, chrome;

before(async () => {
  server = await serve();
  elsewhere = await serve(); // another origin: the page must not reach it
  chrome = await launch({ webgpu: false });
  // Runs before the page's own scripts: keeps every policy violation the page reports.
  await chrome.page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
  });
});
after(async () => { await chrome?.browser.close(); await server?.close(); await elsewhere?.close(); });

function policy(html) {
  const content = /http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(html)?.[1];
  assert.ok(content, 'index.html has a Content-Security-Policy');
  return Object.fromEntries(content.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
}

test('the built policy pins the one inline script and allows no eval and no other origin', async () => {
  const html = await readFile(join(DIST, 'index.html'), 'utf8');
  const csp = policy(html);
  assert.deepEqual(csp['default-src'], ["'self'"]);
  assert.deepEqual(csp['connect-src'], ["'self'"]);
  assert.deepEqual(csp['worker-src'], ["'self'"]);
  assert.deepEqual(csp['object-src'], ["'none'"]);
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  assert.ok(inline.length >= 1, "the wasm loader is an inline script");
  const hashes = inline.map((s) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`);
  assert.deepEqual(csp['script-src'].sort(), ["'self'", "'wasm-unsafe-eval'", ...hashes].sort());
});

test('the page runs under the policy; injected scripts, eval and other origins are refused', { timeout: 10 * MINUTE }, async () => {
  const { page, problems } = chrome;
  await page.goto(server.origin + '/#explore');
  await page.getByTestId('model-facts').waitFor({ timeout: 5 * MINUTE });
  assert.deepEqual(await page.evaluate(() => window.__violations), [], 'loading the page breaks no rule');
  assert.deepEqual(problems, []);

  const refused = await page.evaluate(async (other) => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.head.append(s);
    // DevTools lets the code it evaluates use eval; code the page runs later (a timer) may not.
    const later = (f) => new Promise((r) => setTimeout(() => { try { r(String(f())); } catch (e) { r(e.name); } }, 0));
    const evalResult = await later(() => window.eval('1 + 1'));
    const fnResult = await later(() => new Function('return 2')());
    let fetchResult;
    try { fetchResult = (await fetch(other + '/index.html')).status; } catch (e) { fetchResult = e.name; }
    await new Promise((r) => setTimeout(r, 200)); // violation events are queued
    return { inline: window.__inline ?? null, evalResult, fnResult, fetchResult, violations: window.__violations };
  }, elsewhere.origin);
  assert.equal(refused.inline, null, 'an injected inline script did not run');
  assert.equal(refused.evalResult, 'EvalError');
  assert.equal(refused.fnResult, 'EvalError');
  assert.equal(refused.fetchResult, 'TypeError');
  assert.deepEqual(elsewhere.requests, [], 'the other origin got no request');
  const directives = refused.violations.map((v) => v.split(' ')[0]);
  for (const d of ['script-src-elem', 'script-src', 'connect-src']) assert.ok(directives.includes(d), `no ${d} violation in ${refused.violations}`);
  await page.waitForTimeout(500);
  problems.length = 0; // the refusals above are logged as console errors on purpose
});

test('typed and uploaded text is shown as text, never run as HTML', { timeout: 5 * MINUTE }, async () => {
  const { page, problems } = chrome;
  await page.getByTestId('sentence-a').fill(ATTACK);
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=token]')].some((t) => t.textContent.includes('bold')), null, { timeout: MINUTE });

  await page.getByTestId('tab-studio').click();
  const rows = ['text,label', `"${ATTACK.replaceAll('"', '""')}",positive`];
  for (let i = 0; i < 6; i++) rows.push(`"a fine film number ${i}",positive`, `"a dull film number ${i}",negative`);
  await page.getByTestId('data-file').setInputFiles({ name: 'attack.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n')) });
  await page.getByTestId('validation-report').waitFor({ timeout: MINUTE });
  assert.ok((await page.getByTestId('data-preview').textContent()).includes(ATTACK), 'the preview shows the markup as typed');

  await page.waitForTimeout(500);
  const dom = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    images: [...document.querySelectorAll('img')].filter((i) => i.getAttribute('src') === 'x').length,
    bold: [...document.querySelectorAll('b')].filter((b) => b.textContent === 'bold').length,
    violations: window.__violations,
  }));
  assert.equal(dom.pwned, null, 'no handler or script from the text ran');
  assert.equal(dom.images, 0, 'no <img> element was made from the text');
  assert.equal(dom.bold, 0, 'no <b> element was made from the text');
  await screenshot(page, 'security-markup-as-text');
  assert.deepEqual(problems, []);
});
