// Drives the pages of `cumemguard-report html` in Debian's chromium,
// headless, through the DevTools protocol (puppeteer-core), and prints TAP
// lines numbered from FIRST:
//
//   node page-test.js PLAN.json FIRST
//
// PLAN.json: { chromium, shots (a folder), pages: [ { name, html,
// summary (cumemguard-report --json --top 0 of the same reports, for what
// each moment must show), diff (diff --json, for BASE NEW pages), hostile
// (the report's strings hold markup), search (a function name of the
// report) } ] }.  Ends with the TAP plan; exits 1 when a check failed.
'use strict';
const fs = require('fs');
const path = require('path');

let n = Number(process.argv[3] || 1) - 1;
let failed = 0;
function tap(ok, what, detail) {
  n++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}`);
  if (!ok) {
    failed++;
    if (detail !== undefined)
      for (const l of String(detail).split('\n')) console.log(`#   ${l}`);
  }
}
function same(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  tap(g === w, what, g === w ? undefined : `got  ${g}\nwant ${w}`);
}

// Rows as (bytes, count) pairs, sorted, so that order does not matter.
function pairs(groups) {
  return (groups || []).map((g) => [g.bytes, g.count])
    .sort((a, b) => b[0] - a[0] || b[1] - a[1]);
}

async function rows(page) {
  return page.$$eval('#groups tr.group', (trs) =>
    trs.map((tr) => [Number(tr.dataset.bytes), Number(tr.dataset.count)])
      .sort((a, b) => b[0] - a[0] || b[1] - a[1]));
}

async function selected(page) {
  return page.$eval('#moments button.moment.selected', (b) => b.dataset.moment)
    .catch(() => null);
}

// The first rows the page shows at first (it lists 200, then "show all").
const FIRST_ROWS = 200;
function firstRows(p) {
  return p.slice(0, FIRST_ROWS);
}

// Whether a screenshot is a picture: the page draws it on a canvas and
// counts the colours of a sample of its pixels.
async function notBlank(page, png) {
  const url = 'data:image/png;base64,' + png.toString('base64');
  return page.evaluate(async (u) => {
    const img = new Image();
    await new Promise((ok, ko) => { img.onload = ok; img.onerror = ko; img.src = u; });
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 97) seen.add(`${d[i]},${d[i + 1]},${d[i + 2]}`);
    return seen.size;
  }, url);
}

async function shot(page, dir, name, what) {
  const file = path.join(dir, `${name}.png`);
  const png = await page.screenshot({ path: file, fullPage: false });
  const colours = await notBlank(page, png);
  tap(colours >= 4, `${what}: screenshot ${name}.png is not blank (${colours} colours)`);
}

async function open(browser, p) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const fetched = [], errors = [];
  const self = 'file://' + path.resolve(p.html);
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    const u = r.url();
    if (u === self || u.startsWith('data:') || u === 'about:blank') {
      r.continue();
    } else {
      fetched.push(u);
      r.abort();
    }
  });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
  const t0 = Date.now();
  await page.goto(self, { waitUntil: 'load', timeout: 60000 });
  let ready = true;
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 })
    .catch(() => { ready = false; });
  return { page, fetched, errors, ms: Date.now() - t0, ready };
}

// want with the groups that would read the same in one row added up into
// one: the same line (the one the page's data gives each, in --json's
// order), held by the same driver, of the same pool, holder, kind and API,
// as the text summary prints a composition and the page lists a moment.
function fold(want, data) {
  const rows = new Map();
  (want || []).forEach((g, i) => {
    const d = data && data[i];
    const k = d && d.line != null
      ? JSON.stringify([d.line, d.driver, d.pool, d.held_by, d.kind, d.api]) : `#${i}`;
    const r = rows.get(k);
    if (r === undefined) rows.set(k, { bytes: g.bytes, count: g.count });
    else { r.bytes += g.bytes; r.count += g.count; }
  });
  return [...rows.values()];
}

// The by_stack lists of the page's own data: kind is "peaks" or
// "first_denials"; for "end", its groups live at the end, each with the
// driver that holds it.
async function pageComp(page, kind, i) {
  return page.$eval('#cmg-data', (e, k, j) => {
    const s = JSON.parse(e.textContent).summary;
    if (k === 'end')
      return [].concat((s.leaks || []).map((g) => Object.assign({ driver: null }, g)),
        (s.graph || []).map((g) => Object.assign({}, g, { driver: 'graph memory pool' })),
        (s.context || []).map((g) => Object.assign({}, g, { driver: 'context' })));
    return s && s[k] && s[k][j] ? s[k][j].by_stack : null;
  }, kind, i);
}

// No two rows of the list read the same: line, badges, bytes, count, API.
async function readsOnce(page, what) {
  const texts = await page.$$eval('#groups tr.group', (trs) =>
    trs.map((tr) => [...tr.cells].map((c) => c.innerText.replace(/\s+/g, ' ').trim()).join(' | ')));
  const seen = new Set(), twice = [];
  for (const t of texts) {
    if (seen.has(t)) twice.push(t);
    seen.add(t);
  }
  tap(twice.length === 0, `${what}: no two of its ${texts.length} rows read the same`, twice.join('\n'));
}

// Selects a moment by its button and checks the rows against want.
async function moment(page, id, want, what) {
  const b = await page.$(`#moments button.moment[data-moment="${id}"]`);
  tap(b !== null, `${what}: a button selects it`);
  if (b === null) return;
  await b.click();
  same(await selected(page), id, `${what}: selected`);
  const m = /^(peak|denial):(\d+)$/.exec(id);
  const data = m ? await pageComp(page, m[1] === 'peak' ? 'peaks' : 'first_denials', Number(m[2]))
    : await pageComp(page, 'end', 0);
  same(await rows(page), firstRows(pairs(fold(want, data))), `${what}: the live groups are --json's`);
  await readsOnce(page, what);
}

// The text summary's leak blocks: "Leaked SIZE in N allocations[, K
// stacks] (...) from:" and the lines of the stack under it.
function textBlocks(file) {
  const blocks = [];
  let b = null;
  for (const l of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^Leaked (.+? in \d+ allocations?(?:, \d+ stacks)?) \(/.exec(l);
    if (m) blocks.push((b = { head: m[1], lines: [] }));
    else if (b && l.trim() === '') b = null;
    else if (b) b.lines.push(l.trim());
  }
  return blocks;
}

// Each row at the end, opened: its stack, or the blocks its groups fold
// into, each as "SIZE in N allocations, K stacks" and its lines.
async function endBlocks(page) {
  const out = [];
  for (const tr of await page.$$('#groups tr.group')) {
    await tr.click();
    const row = await tr.evaluate((e) => ({
      head: e.querySelector('td.bytes').innerText + ' in ' + e.dataset.count + ' allocation' +
        (e.dataset.count === '1' ? '' : 's') +
        [...e.querySelectorAll('.badge')].map((x) => x.innerText).filter((t) => / stacks$/.test(t))
          .map((t) => ', ' + t).join(''),
      blocks: [...e.nextElementSibling.querySelectorAll(':scope > td > .block')].map((b) => ({
        head: b.querySelector('.block-head').innerText,
        lines: [...b.querySelectorAll('.lines .line')].map((x) => x.innerText.trim()) })),
      lines: [...e.nextElementSibling.querySelectorAll(':scope > td > .lines .line')].map((x) => x.innerText.trim()),
    }));
    await tr.click();
    out.push(row.blocks.length ? row.blocks : [{ head: row.head, lines: row.lines }]);
  }
  return out;
}

// The end against the text summary: every block the text prints is one
// block of one row, with the same size, allocations and stacks, and the
// page shows nothing the text does not.
async function checkText(page, p) {
  const want = textBlocks(p.text);
  const got = await endBlocks(page);
  const norm = (ls) => ls.map((l) => l.replace(/#\d+/g, '#').replace(/\.\.\. \d+/g, '... ')).join('\n');
  const left = got.flat();
  const missed = [];
  for (const w of want) {
    const k = left.findIndex((g) => g.head === w.head &&
      (norm(w.lines) === norm(g.lines) || norm(w.lines.slice(1)) === norm(g.lines)));
    if (k < 0) missed.push(`${w.head}: ${w.lines[0]}`);
    else left.splice(k, 1);
  }
  tap(missed.length === 0 && left.length === 0,
    `${p.name}: its ${got.length} rows at the end hold the text summary's ${want.length} leak blocks, no more`,
    missed.map((m) => 'not on the page: ' + m).concat(left.map((g) => `not in the text: ${g.head}: ${g.lines[0]}`)).join('\n'));
}

// Hovering a chart shows the time and the bytes under the mouse.
async function checkHover(page, name) {
  const chart = await page.$('#timeline svg.chart');
  if (chart === null) return;
  await chart.evaluate((e) => e.scrollIntoView({ block: 'center' }));
  const box = await chart.boundingBox();
  // Marks (a report written, a denial) have tooltips of their own: the
  // first places across the chart that are on none show the bytes.  A
  // run whose memory came only at its end is looked at closer there.
  const tips = [];
  const at = [0.3, 0.37, 0.44, 0.51, 0.58, 0.65, 0.72, 0.79, 0.86, 0.93, 0.96, 0.975, 0.985, 0.992, 0.997];
  for (const f of at) {
    if (tips.some((t) => /\d (B|KiB|MiB|GiB)/.test(t))) break;
    await page.mouse.move(box.x + box.width * f, box.y + box.height * 0.6);
    tips.push(await page.$eval('#tooltip', (e) => (e.hidden ? '' : e.textContent)));
  }
  tap(tips.every((t) => /\d\.\d{3} s/.test(t)) && tips.some((t) => /\d (B|KiB|MiB|GiB)/.test(t)),
    `${name}: hovering the chart shows a time and bytes`, tips.join('\n'));
  await page.mouse.move(0, 0);
}

// Clicks the chart's first mark of a kind; it must select the moment of
// that kind (kind:I) whose groups are --json's list[I].by_stack.
async function clickMark(page, selector, kind, list, name, what) {
  const mark = await page.$(`#timeline svg.chart ${selector}`);
  if (mark === null || list.length === 0) return;
  await mark.evaluate((e) => e.dispatchEvent(new MouseEvent('click', { bubbles: true })));
  const id = await selected(page);
  const i = id !== null && id.startsWith(`${kind}:`) ? Number(id.slice(kind.length + 1)) : -1;
  tap(i >= 0, `${name}: clicking the chart's ${what} selects it`, `selected ${id}`);
  if (i >= 0)
    same(await rows(page), firstRows(pairs(fold(list[i].by_stack,
      await pageComp(page, kind === 'peak' ? 'peaks' : 'first_denials', i)))),
      `${name}: the groups shown at the clicked ${what} are --json's ${kind === 'peak' ? 'peaks' : 'first_denials'}[${i}]`);
}

// Each chart's header gives its peak at the instant the peak's moment
// button gives, the peak's own time.
async function checkPeakTimes(page, name) {
  const caps = await page.$$eval('#timeline .chart-cap', (cs) =>
    cs.map((c) => (/ · peak [^·]* at (\d+\.\d+ s)/.exec(c.textContent) || [])[1]));
  const buttons = await page.$$eval('#moments button.moment', (bs) =>
    bs.filter((b) => b.dataset.moment.startsWith('peak:'))
      .map((b) => (/ at (\d+\.\d+ s)/.exec(b.textContent) || [])[1]));
  tap(caps.every((t) => t !== undefined && buttons.includes(t)),
    `${name}: each chart's peak is at a peak moment's time`, `charts ${caps.join(', ')}; moments ${buttons.join(', ')}`);
}

async function checkMarks(page, p, s, name) {
  await checkPeakTimes(page, name);
  await checkHover(page, name);
  await clickMark(page, 'circle.mark-peak', 'peak', s.peaks, name, 'peak');
  await clickMark(page, 'g.mark-denial', 'denial', s.first_denials, name, 'first denial');
}

async function checkStack(page, name) {
  const first = await page.$('#groups tr.group');
  if (first === null) return;
  await first.click();
  // A row of several stacks opens onto a block of each: the first's.
  const count = (what) => page.$eval('#groups tr.stack > td', (td, w) => {
    const box = td.querySelector(':scope > .block') || td;
    return box.querySelectorAll(`:scope > .${w[0]} > .${w[1]}`).length;
  }, what);
  const lines = await count(['lines', 'line']);
  tap(lines > 0, `${name}: a group opens onto its stack (${lines} lines)`);
  const all = await page.$('#groups tr.stack > td > .block:first-child > .all-frames') ||
    await page.$('#groups tr.stack > td > .all-frames');
  tap(all !== null, `${name}: the stack can show all its frames`);
  if (all !== null) {
    await all.click();
    const frames = await count(['frames', 'frame']);
    tap(frames >= lines - 1, `${name}: all frames shown (${frames})`);
  }
}

async function checkSearch(page, p, name) {
  await page.$eval('#search', (e) => { e.value = ''; });
  await page.type('#search', 'no-such-function-anywhere');
  same(await page.$$eval('#groups tr.group', (t) => t.length), 0,
    `${name}: a search that matches nothing shows no group`);
  await page.$eval('#search', (e) => { e.value = ''; });
  await page.type('#search', p.search);
  const got = await page.$$eval('#groups tr.group', (t) => t.length);
  tap(got > 0, `${name}: searching '${p.search}' finds its groups (${got})`);
  await page.$eval('#search', (e) => { e.value = ''; e.dispatchEvent(new Event('input', { bubbles: true })); });
}

async function checkFlame(page, p, name) {
  const frs = await page.$$('#flame .fr');
  tap(frs.length > 0, `${name}: the flame graph draws frames (${frs.length})`);
  if (frs.length === 0) return;
  const target = frs[Math.min(frs.length - 1, 1)];
  const label = await target.evaluate((e) => e.dataset.name);
  await target.evaluate((e) => e.dispatchEvent(new MouseEvent('click', { bubbles: true })));
  same(await page.$eval('#flame', (e) => e.dataset.zoom || null), label,
    `${name}: clicking a frame zooms into it`);
  await page.type('#flame-search', p.search);
  const matched = await page.$$eval('#flame .fr.match', (m) => m.length);
  tap(matched > 0, `${name}: the flame search highlights '${p.search}' (${matched})`);
  await page.click('#flame-reset');
  same(await page.$eval('#flame', (e) => e.dataset.zoom || null), null,
    `${name}: reset unzooms`);
}

async function checkDiff(page, d, name) {
  const shown = await page.$eval('#compare', (e) => !e.hidden && e.offsetHeight > 0)
    .catch(() => false);
  tap(shown, `${name}: the compare view is shown`);
  const deltas = await page.$$eval('#changes tr.change', (t) => t.map((r) => Number(r.dataset.delta)));
  same(deltas.length, d.changes.length, `${name}: one row per change of diff --json`);
  const firstShrink = deltas.findIndex((x) => x < 0);
  tap(firstShrink < 0 || deltas.slice(firstShrink).every((x) => x < 0),
    `${name}: what grew or is held comes first, then what shrank`, JSON.stringify(deltas));
  const open = await page.$('#changes tr.change');
  if (open !== null) {
    await open.click();
    const lines = await page.$$eval('#changes tr.stack div.line', (l) => l.length);
    tap(lines > 0, `${name}: a change opens onto its stack`);
  }
}

async function checkHostile(page, name) {
  const r = await page.evaluate(() => ({
    pwned: window.__pwned === 1,
    scripts: document.scripts.length,
    imgs: document.images.length,
    text: document.body.innerText,
  }));
  tap(!r.pwned, `${name}: no string of the report ran as script`);
  same(r.scripts, 2, `${name}: the page's own two scripts are its only ones`);
  same(r.imgs, 0, `${name}: no string became an element`);
  tap(r.text.includes('<script>window.__pwned=1</script>'),
    `${name}: markup in a function name shows as text`);
}

async function onePage(browser, plan, p) {
  const s = JSON.parse(fs.readFileSync(p.summary, 'utf8')).summaries[0];
  const o = await open(browser, p);
  const { page } = o;
  tap(o.ready, `${p.name}: the page is ready`, o.errors.join('\n'));
  if (p.big)
    console.log(`# ${p.name}: ready ${o.ms} ms after it was asked for`);
  same(await page.$$eval('#devices tr.device', (t) => t.length), s.devices.length,
    `${p.name}: a row per device`);
  same(await page.$$eval('#devices .note.footprint', (t) => t.length),
    s.devices.filter((d) => d.footprint).length, `${p.name}: a footprint line per device that has one`);
  same(await page.$$eval('#devices .note.cross-check', (t) => t.map((e) => e.textContent)),
    p.crossCheck || [], `${p.name}: the cross-checks, as the text summary says them`);
  const end = s.leaks.concat(s.graph || [], s.context || []);
  same(await selected(page), 'end', `${p.name}: the end is selected at first`);
  same(await rows(page), firstRows(pairs(fold(end, await pageComp(page, 'end', 0)))),
    `${p.name}: at the end, the live groups are --json's`);
  await readsOnce(page, `${p.name}: the end`);
  if (p.text) await checkText(page, p);
  await shot(page, plan.shots, `${p.name}-main`, p.name);
  for (let i = 0; i < s.peaks.length && !p.big; i++)
    await moment(page, `peak:${i}`, s.peaks[i].by_stack, `${p.name}: peak ${i}`);
  for (let i = 0; i < s.first_denials.length; i++)
    await moment(page, `denial:${i}`, s.first_denials[i].by_stack, `${p.name}: denial ${i}`);
  await checkMarks(page, p, s, p.name);
  await moment(page, 'end', end, `${p.name}: the end again`);
  await checkStack(page, p.name);
  if (p.search) {
    await checkSearch(page, p, p.name);
    await checkFlame(page, p, p.name);
    await page.$eval('#flame', (e) => e.scrollIntoView());
    await shot(page, plan.shots, `${p.name}-flame`, p.name);
  }
  if (p.diff) {
    await checkDiff(page, JSON.parse(fs.readFileSync(p.diff, 'utf8')), p.name);
    await page.$eval('#compare', (e) => e.scrollIntoView());
    await shot(page, plan.shots, `${p.name}-compare`, p.name);
  }
  if (p.hostile) await checkHostile(page, p.name);
  same(o.fetched, [], `${p.name}: nothing was fetched from the network`);
  same(o.errors, [], `${p.name}: no console error or uncaught exception`);
  await page.close();
}

async function main() {
  const plan = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  let puppeteer;
  try {
    puppeteer = require('puppeteer-core');
  } catch (e) {
    tap(false, `puppeteer-core loads (scripts/install-deps.sh installs it): ${e.message.split('\n')[0]}`);
    return;
  }
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: plan.chromium,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  } catch (e) {
    tap(false, `chromium starts (${plan.chromium}): ${e.message.split('\n')[0]}`);
    return;
  }
  tap(true, `chromium starts (${await browser.version()})`);
  try {
    for (const p of plan.pages) await onePage(browser, plan, p);
  } catch (e) {
    tap(false, `the checks ran to the end: ${e.stack}`);
  } finally {
    await browser.close();
  }
}

main().then(() => {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
});
