// Opens a study's report.html in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; nothing downloaded) and checks what a reader sees: the page loads with no
// console error, every chart draws the number of points expected of it, and a legend's check
// box hides its series and shows it again.
//
//   node report_test.mjs REPORT.html PLOT=POINTS[/SERIES_POINTS] ...
// PLOT is a chart's plot name, POINTS the markers it must draw, SERIES_POINTS those of its
// first series (what unticking its box must hide). Exit 0 when every check holds, else 1.
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [report, ...expectations] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) errors.push('fetched ' + r.url()); });
  await page.goto(pathToFileURL(path.resolve(report)).href, { waitUntil: 'load' });
  check(errors.length === 0, 'console errors: ' + errors.join('; '));
  check((await page.locator('h1').count()) === 1, 'one title');
  check((await page.locator('p.answer').count()) === 1, 'an answer');

  for (const e of expectations) {
    const [plot, counts] = e.split('=');
    const [points, first] = counts.split('/').map(Number);
    const fig = page.locator(`figure#plot-${plot}`);
    check((await fig.count()) === 1, `chart ${plot} present`);
    if ((await fig.count()) !== 1) continue;
    const markers = fig.locator('.point');
    check((await markers.count()) === points, `${plot}: ${await markers.count()} points, expected ${points}`);
    check(Number(await fig.getAttribute('data-points')) === points, `${plot}: data-points`);
    // Every marker is drawn: a real box on the page.
    let drawn = 0;
    for (let i = 0; i < (await markers.count()); ++i) {
      const b = await markers.nth(i).boundingBox();
      if (b && b.width > 0 && b.height > 0) ++drawn;
    }
    check(drawn === points, `${plot}: ${drawn} of ${points} markers drawn`);
    if (Number.isNaN(first) || first === undefined) continue;
    // Untick the first series: its markers disappear; tick it: they are back.
    const box = fig.locator('input[data-series]').first();
    await box.uncheck();
    check((await fig.locator('.point:visible').count()) === points - first,
          `${plot}: after hiding the first series ${await fig.locator('.point:visible').count()} visible, expected ${points - first}`);
    await box.check();
    check((await fig.locator('.point:visible').count()) === points, `${plot}: series shown again`);
  }
  // Hovering a point shows its value.
  const point = page.locator('.point').first();
  if ((await point.count()) === 1 || (await page.locator('.point').count()) > 0) {
    await point.hover();
    const tip = page.locator('#tip');
    check(await tip.isVisible(), 'the hover tip shows');
    check((await tip.textContent()) === (await point.getAttribute('data-tip')), 'the tip is the point\'s value');
  }
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(failures.map((f) => 'FAILED: ' + f).join('\n'));
  process.exit(1);
}
console.log(`report ok: ${expectations.length} charts checked`);
