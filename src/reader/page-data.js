  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const arr = (x) => (Array.isArray(x) ? x : []);
  const num = (x) => (typeof x === 'number' && isFinite(x) ? x : 0);
  const isNum = (x) => typeof x === 'number' && isFinite(x);
  const str = (x) => (typeof x === 'string' ? x : x == null ? '' : String(x));
  /* Text laid out in the page is cut at a length no real name reaches:
     laying out tens of thousands of characters takes the browser seconds.
     Expanded stacks keep every character. */
  const short = (s) => (s.length > 500 ? s.slice(0, 500) + '…' : s);
  const txt = (x) => short(str(x));

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, cls) {
    const e = document.createElementNS(SVGNS, tag);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (cls) e.setAttribute('class', cls);
    return e;
  }

  /* Sizes read the same as in the terminal summary, so a number can be
     searched for in either. */
  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  function fmtSize(b) {
    if (!isNum(b)) return '?';
    if (b < 0) return '-' + fmtSize(-b);
    b = Math.round(b);
    if (b < 1024) return b + ' B';
    let u = 0;
    while (u < UNITS.length - 1 && b >= Math.pow(1024, u + 1)) u++;
    let tenths;
    for (;;) {
      tenths = Math.floor((b * 10) / Math.pow(1024, u) + 0.5);
      if (tenths < 10240 || u === UNITS.length - 1) break;
      u++;
    }
    return Math.floor(tenths / 10) + '.' + (tenths % 10) + ' ' + UNITS[u];
  }
  const fmtSigned = (b) => (b > 0 ? '+' : b < 0 ? '-' : '') + fmtSize(Math.abs(num(b)));
  const fmtTime = (t) => (isNum(t) ? t.toFixed(3) : '?') + ' s';
  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);
  const pct = (part, whole) => (whole > 0 ? ((100 * part) / whole).toFixed(1) : '0.0') + '%';
  function fmtDate(t) {
    if (!isNum(t) || t <= 0) return '';
    const d = new Date(t * 1000);
    return isNaN(d.getTime()) ? '' : d.toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
  }

  /* ---- data ----------------------------------------------------------- */
  let D = null;
  try {
    D = JSON.parse($('cmg-data').textContent);
  } catch (e) {
    D = null;
  }
  if (!D || typeof D !== 'object' || !D.summary || typeof D.summary !== 'object') {
    $('about').appendChild(el('p', 'note', 'This page holds no report data: write it with "cumemguard-report html".'));
    document.body.dataset.ready = '1';
    return;
  }
  const S = D.summary;
  const STRINGS = arr(D.strings);
  const FRAMES = arr(D.frames);
  const REPORTS = arr(D.reports);
  const SOURCES = arr(S.sources);
  const PEAKS = arr(S.peaks);
  const FDS = arr(S.first_denials);
  const DEVICES = arr(S.devices);
  const multiDevice = new Set(DEVICES.map((d) => d && d.ordinal)).size > 1;
  const sline = (i) => str(STRINGS[i]);
  const frame = (i) => (FRAMES[i] && typeof FRAMES[i] === 'object' ? FRAMES[i] : {});
  const isPy = (f) => f.lang === 'python';

  /* A frame's short name, as the flame graph and the terminal show it:
     the demangled name without its argument list where the tool has one. */
  const labelCache = new Map();
  function frameLabel(i) {
    let l = labelCache.get(i);
    if (l !== undefined) return l;
    const f = frame(i);
    if (f.name) l = str(f.name);
    else if (f.function) l = str(f.function);
    else if (f.module && f.offset) l = str(f.module) + '+' + str(f.offset);
    else l = '?';
    labelCache.set(i, l);
    return l;
  }
  function frameText(i, k) {
    const f = frame(i);
    let s = '#' + k + ' ' + (f.function ? str(f.function) : frameLabel(i));
    if (f.file) s += ' (' + str(f.file) + (f.line != null ? ':' + str(f.line) : '') + (f.inlined ? ', inlined' : '') + ')';
    if (!isPy(f) && f.module) s += '  in ' + str(f.module) + (f.offset ? '+' + str(f.offset) : '');
    if (isNum(f.cut) && f.cut > 0) s += '  (' + plural(f.cut, 'frame', 'frames') + ' cut)';
    return s;
  }
  function shownRange(g) {
    const n = arr(g.frames).length;
    const s = arr(g.shown);
    let lo = isNum(s[0]) ? Math.max(0, Math.min(n, s[0])) : 0;
    let hi = isNum(s[1]) ? Math.max(lo, Math.min(n, s[1])) : n;
    return [lo, hi];
  }
  /* A group's one-line view, as the terminal prints it (the tool's
     user-first rule): its title, or its innermost frames that say
     something; the first shown frame where the data has none. */
  function groupLine(g) {
    return g.line != null ? str(g.line) : groupTitle(g);
  }
  function groupTitle(g) {
    if (g.title) return str(g.title);
    const fr = arr(g.frames);
    if (!fr.length) return '(no stack)';
    const [lo, hi] = shownRange(g);
    return frameLabel(lo < hi ? fr[lo] : fr[0]);
  }

  /* Which summary source a report is: merged views number their sources
     as the reports were given; a diff's summary is the new report's only. */
  const repSource = REPORTS.map((r, i) => {
    const k = SOURCES.findIndex((s) => s && r && s.file === r.file && s.pid === r.pid);
    if (k >= 0) return k;
    if (D.mode === 'diff') return i === REPORTS.length - 1 ? 0 : -1;
    return i < SOURCES.length ? i : -1;
  });
  const sameTime = (a, b) => isNum(a) && isNum(b) && Math.abs(a - b) <= 5e-6 + 1e-9 * Math.abs(a);
  function firstDenialOf(r, den) {
    const src = repSource[r];
    if (src < 0 || !den) return -1;
    return FDS.findIndex((fd) => fd && fd.source === src && fd.device === den.device && sameTime(fd.time, den.time));
  }
  const devName = (d) => (d == null ? 'the host' : 'device ' + d);
