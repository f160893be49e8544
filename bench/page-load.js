// How long a page of `cumemguard-report html` takes to become interactive
// in headless Chromium (make bench, bench/page.c):
//
//   node page-load.js PAGE.html RUNS
//
// Opens the page RUNS times, each in a fresh tab of one browser, and times
// each from just before navigating to it until the page has drawn and
// marked itself ready (body[data-ready="1"]).  Prints one line
// "ready_ms MEDIAN MIN" on stdout; on any failure one line on stderr that
// says why, and exit status 1.  Chromium is $CMG_CHROMIUM, else chromium
// on PATH; puppeteer-core is found through NODE_PATH.
'use strict';
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');

// Far above the 3 s target: a slow page is a figure, only one that never
// becomes ready is a failure.
const TIMEOUT_MS = 120000;

function firstLine(e) {
  return String((e && e.message) || e).split('\n')[0];
}

function fail(why) {
  process.stderr.write(`${why}\n`);
  process.exit(1);
}

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir === '') continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch (e) {
      // not in this one
    }
  }
  return null;
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

// One load in a fresh tab.  A script error on the page fails at once
// rather than after the timeout: a page that threw never becomes ready.
async function load(browser, url) {
  const page = await browser.newPage();
  try {
    await page.setViewport({ width: 1280, height: 900 });
    let threw;
    const broke = new Promise((_, ko) => { threw = ko; });
    broke.catch(() => {});
    page.on('pageerror', (e) => threw(new Error(`the page threw: ${firstLine(e)}`)));
    const t0 = performance.now();
    await Promise.race([
      (async () => {
        await page.goto(url, { waitUntil: 'load', timeout: TIMEOUT_MS });
        await page.waitForSelector('body[data-ready="1"]', { timeout: TIMEOUT_MS });
      })(),
      broke,
    ]);
    return performance.now() - t0;
  } finally {
    await page.close().catch(() => {});
  }
}

async function main() {
  const [file, runsArg] = process.argv.slice(2);
  const runs = Number(runsArg);
  if (!file || !Number.isInteger(runs) || runs < 1)
    fail('usage: node page-load.js PAGE.html RUNS');
  if (!fs.existsSync(file)) fail(`no page ${file}`);
  let puppeteer;
  try {
    puppeteer = require('puppeteer-core');
  } catch (e) {
    fail(`no puppeteer-core in NODE_PATH=${process.env.NODE_PATH || ''}`);
  }
  const chromium = process.env.CMG_CHROMIUM || onPath('chromium');
  if (!chromium) fail('no chromium on PATH, and CMG_CHROMIUM unset');
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  } catch (e) {
    fail(`chromium did not start (${chromium}): ${firstLine(e)}`);
  }
  const url = pathToFileURL(path.resolve(file)).href;
  const ms = [];
  try {
    for (let i = 0; i < runs; i++) ms.push(await load(browser, url));
  } catch (e) {
    await browser.close().catch(() => {});
    fail(`the page did not become ready: ${firstLine(e)}`);
  }
  await browser.close();
  console.log(`ready_ms ${median(ms).toFixed(1)} ${Math.min(...ms).toFixed(1)}`);
}

main().catch((e) => fail(firstLine(e)));
