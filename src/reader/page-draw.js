  /* ---- timeline ------------------------------------------------------- */
  function niceStep(span, n) {
    const raw = span / n;
    if (!(raw > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  /* Byte ticks fall on round numbers of a binary unit: 2.0 GiB, not 2.1 GB. */
  function byteStep(max, n) {
    let unit = 1;
    while (unit * 1024 <= max / 1) unit *= 1024;
    return niceStep(max / unit, n) * unit;
  }
  function axisTime(v, step) {
    const dec = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
    return v.toFixed(dec) + ' s';
  }
  function drawTimeline() {
    const sec = $('timeline');
    let any = false;
    REPORTS.forEach((rep, r) => {
      for (const s of arr(rep && rep.timeline)) {
        if (!s || !arr(s.points).length) continue;
        any = true;
        sec.appendChild(drawChart(rep, r, s));
      }
    });
    if (!any) sec.appendChild(el('p', 'note', 'This report has no timeline.'));
  }
  function drawChart(rep, r, s) {
    const W = 1120, H = 240, L = 74, R = 24, T = 14, B = 30;
    const pts = arr(s.points).filter((p) => Array.isArray(p) && p.length >= 4 && p.every(isNum));
    const dev = s.device;
    const nSeries = arr(rep.timeline).length;
    const dens = [];
    arr(rep.denials).forEach((d, i) => {
      if (d && (d.device === dev || (d.device == null && nSeries === 1))) dens.push([d, i]);
    });
    const dumps = arr(rep.dumps).filter((d) => d && isNum(d.time));
    const last = pts.length ? pts[pts.length - 1] : [0, 0, 0, 0];
    let tMax = Math.max(last[0], num(s.peak_time), ...dens.map((x) => num(x[0].time)), ...dumps.map((d) => d.time));
    if (!(tMax > 0)) tMax = 1;
    let yMax = Math.max(num(s.peak_bytes), num(s.limit_bytes), num(s.soft_limit_bytes), 1);
    for (const p of pts) if (p[3] > yMax) yMax = p[3];
    const ys = byteStep(yMax, 4), yTop = Math.ceil((yMax * 1.04) / ys) * ys;
    const xs = niceStep(tMax, 8), xTop = tMax * 1.01;
    const X = (t) => L + (Math.max(0, t) / xTop) * (W - L - R);
    const Y = (b) => T + (1 - Math.max(0, b) / yTop) * (H - T - B);

    const box = el('div', 'chart-box');
    const d = DEVICES.find((x) => x && x.ordinal === dev);
    let cap = devName(dev) + (d && d.name ? ': ' + txt(d.name) : '');
    if (REPORTS.length > 1) cap = (D.mode === 'diff' ? (r === 0 ? 'base' : 'new') + ', ' : '') + 'pid ' + str(rep.pid) + ', ' + cap;
    cap += ' · peak ' + fmtSize(num(s.peak_bytes)) + ' at ' + fmtTime(num(s.peak_time));
    if (s.limit_bytes != null) cap += ' · limit ' + fmtSize(s.limit_bytes);
    if (s.soft_limit_bytes != null) cap += ' · soft limit ' + fmtSize(s.soft_limit_bytes);
    if (isNum(s.resolution)) cap += ' · resolution ' + fmtTime(s.resolution);
    box.appendChild(el('div', 'chart-cap', cap));
    const lg = el('div', 'legend');
    const item = (style, text) => {
      const sp = el('span');
      const sw = el('span', 'sw');
      sw.style.cssText = style;
      sp.append(sw, text);
      lg.appendChild(sp);
    };
    item('background:#9cc0ea;border:1px solid #2f6db5', 'highest live in each interval');
    item('border-top:1px solid #16437a;height:0', 'lowest, where lower');
    if (s.limit_bytes != null) item('border-top:2px dashed #c62828;height:0', 'limit');
    if (s.soft_limit_bytes != null) item('border-top:2px dotted #b26a00;height:0', 'soft limit');
    item('border:2px solid #d35400;border-radius:50%;width:9px;height:9px', 'peak');
    if (dens.length) item('background:#c62828;width:8px', 'denial');
    if (dumps.length) item('border-left:1px dashed #7d8590;width:2px', 'report written');
    item('background:#2f6db5;border-radius:50%;width:9px;height:9px', 'end');
    box.appendChild(lg);

    const g = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img' }, 'chart');
    g.dataset.report = str(r);
    g.dataset.device = str(dev);
    for (let v = 0; v <= yTop + ys / 2; v += ys) {
      g.appendChild(sv('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v) }, v === 0 ? 'axis' : 'grid'));
      g.appendChild(sv('text', { x: L - 6, y: Y(v) + 4, 'text-anchor': 'end' })).textContent = fmtSize(v);
    }
    for (let v = 0; v <= xTop; v += xs) {
      g.appendChild(sv('line', { x1: X(v), x2: X(v), y1: H - B, y2: H - B + 4 }, 'axis'));
      g.appendChild(sv('text', { x: X(v), y: H - B + 16, 'text-anchor': 'middle' })).textContent = axisTime(v, xs);
    }
    g.appendChild(sv('line', { x1: L, x2: L, y1: T, y2: H - B }, 'axis'));
    /* Each point covers its interval at the highest value seen in it, so
       a spike between two samples still shows: the value sampled at an
       instant says nothing of the time after it. */
    if (pts.length) {
      /* Intervals narrower than a pixel together are drawn as one, at the
         highest and lowest of them, so a long run stays cheap to draw and
         no spike is lost. */
      const r1 = (v) => Math.round(v * 10) / 10;
      const segs = [];
      let cur = null;
      for (let i = 0; i + 1 < pts.length; i++) {
        const x0 = X(pts[i][0]), x1 = X(pts[i + 1][0]);
        if (cur && x1 - cur[0] <= 1) {
          cur[1] = x1;
          if (pts[i][3] > cur[2]) cur[2] = pts[i][3];
          if (pts[i][2] < cur[3]) cur[3] = pts[i][2];
        } else segs.push((cur = [x0, x1, pts[i][3], pts[i][2]]));
      }
      const a = ['M', r1(X(pts[0][0])), r1(Y(0))];
      const mn = [];
      for (const [x0, x1, hi, lo] of segs) {
        const y = r1(Y(hi));
        a.push('L', r1(x0), y, 'L', r1(x1), y);
        if (lo !== hi) mn.push('M', r1(x0), r1(Y(lo)), 'L', r1(x1), r1(Y(lo)));
      }
      a.push('L', r1(X(last[0])), r1(Y(last[3])), 'L', r1(X(last[0])), r1(Y(0)), 'Z');
      g.appendChild(sv('path', { d: a.join(' ') }, 'area'));
      if (mn.length) g.appendChild(sv('path', { d: mn.join(' ') }, 'minline'));
    }
    const info = new WeakMap();
    const mark = (node, lines, action) => { node.classList.add('mark'); info.set(node, { lines, action }); g.appendChild(node); return node; };
    const markLine = (cls, x1, y1, x2, y2, lines) => {
      const m = sv('g');
      m.appendChild(sv('line', { x1, y1, x2, y2 }, 'hit'));
      m.appendChild(sv('line', { x1, y1, x2, y2 }, cls));
      return mark(m, lines);
    };
    if (s.limit_bytes != null)
      markLine('limit', L, Y(s.limit_bytes), W - R, Y(s.limit_bytes), ['limit', fmtSize(s.limit_bytes) + ' on ' + devName(dev)]);
    if (s.soft_limit_bytes != null)
      markLine('soft-limit', L, Y(s.soft_limit_bytes), W - R, Y(s.soft_limit_bytes), ['soft limit', fmtSize(s.soft_limit_bytes) + ' on ' + devName(dev)]);
    for (const dm of dumps)
      markLine('mark-dump', X(dm.time), T, X(dm.time), H - B, ['report written at ' + fmtTime(dm.time), 'reason: ' + str(dm.reason)]);
    for (const [dn, i] of dens) {
      const x = X(num(dn.time));
      const m = sv('g', null, 'mark-denial');
      m.dataset.index = str(i);
      m.appendChild(sv('line', { x1: x, x2: x, y1: T, y2: H - B }, 'hit'));
      m.appendChild(sv('line', { x1: x, x2: x, y1: T + 8, y2: H - B }, 'v'));
      m.appendChild(sv('path', { d: 'M' + (x - 6) + ' ' + T + ' L' + (x + 6) + ' ' + T + ' L' + x + ' ' + (T + 10) + ' Z' }));
      const j = firstDenialOf(r, dn);
      mark(m, ['denial on ' + devName(dn.device) + ' at ' + fmtTime(dn.time),
        str(dn.api) + ' of ' + fmtSize(num(dn.requested_bytes)) + ' refused',
        fmtSize(num(dn.live_bytes)) + ' live' + (dn.limit_bytes != null ? ', limit ' + fmtSize(dn.limit_bytes) : ''),
        str(dn.stack), j >= 0 ? 'click: list what was live then' : ''].filter(Boolean),
      j >= 0 ? () => selectMoment('denial:' + j) : null);
    }
    const src = repSource[r];
    const pk = src < 0 ? -1 : PEAKS.findIndex((p) => p && p.device === dev && p.source === src);
    mark(sv('circle', { cx: X(num(s.peak_time)), cy: Y(num(s.peak_bytes)), r: 5 }, 'mark-peak'),
      ['peak of ' + devName(dev) + ' at ' + fmtTime(s.peak_time), fmtSize(num(s.peak_bytes)) + ' live',
        pk >= 0 ? 'click: list what was live then' : ''].filter(Boolean),
      pk >= 0 ? () => selectMoment('peak:' + pk) : null);
    mark(sv('circle', { cx: X(last[0]), cy: Y(last[1]), r: 4.5 }, 'mark-end'),
      ['end at ' + fmtTime(last[0]), fmtSize(last[1]) + ' live', src >= 0 ? 'click: list what was live at the end' : ''].filter(Boolean),
      src >= 0 ? () => selectMoment('end') : null);
    const cursor = sv('line', { x1: 0, x2: 0, y1: T, y2: H - B, visibility: 'hidden' }, 'cursor');
    g.appendChild(cursor);

    g.addEventListener('mousemove', (ev) => {
      const m = ev.target.closest && ev.target.closest('.mark');
      if (m && info.has(m)) { cursor.setAttribute('visibility', 'hidden'); showTip(ev, info.get(m).lines); return; }
      const rc = g.getBoundingClientRect();
      const x = ((ev.clientX - rc.left) * W) / rc.width;
      if (x < L || x > W - R || !pts.length) { hideTip(); cursor.setAttribute('visibility', 'hidden'); return; }
      const t = ((x - L) / (W - L - R)) * xTop;
      let lo = 0, hi = pts.length - 1;
      if (t < pts[0][0]) { showTip(ev, [fmtTime(t), 'before the first record']); return; }
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (pts[mid][0] <= t) lo = mid; else hi = mid - 1; }
      const p = pts[lo], nx = pts[lo + 1];
      const lines = [nx ? fmtTime(p[0]) + ' – ' + fmtTime(nx[0]) : 'at ' + fmtTime(p[0]) + ' (the last record)', 'max ' + fmtSize(p[3])];
      if (p[2] !== p[3]) lines.push('min ' + fmtSize(p[2]));
      lines.push('live at ' + fmtTime(p[0]) + ': ' + fmtSize(p[1]));
      cursor.setAttribute('x1', X(t)); cursor.setAttribute('x2', X(t)); cursor.setAttribute('visibility', 'visible');
      showTip(ev, lines);
    });
    g.addEventListener('mouseleave', () => { hideTip(); cursor.setAttribute('visibility', 'hidden'); });
    g.addEventListener('click', (ev) => {
      const m = ev.target.closest && ev.target.closest('.mark');
      const a = m && info.get(m);
      if (a && a.action) a.action();
    });
    box.appendChild(g);
    return box;
  }

  /* ---- flame graph ---------------------------------------------------- */
  const flame = (function () {
    const ROW = 18;
    let root = null, zoom = null, dirty = true, visible = false, builtFor = null;
    const nodeOf = new WeakMap();
    /* One key per distinct label and language: frames of the same name
       merge, as they do in the SVG flame graph. */
    const keyOf = new Map(), keyName = [], keyPy = [];
    function keyFor(fi) {
      let k = keyOf.get(fi);
      if (k === undefined) {
        const name = frameLabel(fi), py = isPy(frame(fi));
        const s = (py ? 'p' : 'n') + name;
        k = keyOf.get(s);
        if (k === undefined) { k = keyName.length; keyName.push(name); keyPy.push(py); keyOf.set(s, k); }
        keyOf.set(fi, k);
      }
      return k;
    }
    const weight = () => $('flame-weight').value;
    function groups() {
      const w = weight();
      if (w === 'end') return endItems().map((it) => it.g);
      if (w === 'peak') return PEAKS[0] ? arr(PEAKS[0].by_stack) : [];
      if (w === 'denial') return FDS[0] ? arr(FDS[0].by_stack) : [];
      return current ? current.cache.flatMap((it) => it.members || [it.g]) : [];
    }
    function build() {
      root = { k: -1, bytes: 0, kids: null, parent: null, depth: 0 };
      let n = 0;
      for (const g of groups()) {
        const w = num(g && g.bytes);
        if (w <= 0) continue;
        n++;
        root.bytes += w;
        const fr = arr(g.frames);
        const [lo, hi] = shownRange(g);
        let at = root;
        for (let i = hi - 1; i >= lo; i--) {
          const k = keyFor(fr[i]);
          if (!at.kids) at.kids = new Map();
          let c = at.kids.get(k);
          if (!c) { c = { k, bytes: 0, kids: null, parent: at, depth: at.depth + 1 }; at.kids.set(k, c); }
          c.bytes += w;
          at = c;
        }
      }
      root.groups = n;
      zoom = null;
      $('flame').removeAttribute('data-zoom');
    }
    function color(name, py) {
      let h = 2166136261;
      for (let i = 0; i < name.length && i < 200; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
      const v1 = h & 0xff, v2 = (h >>> 8) & 0xff;
      return py ? 'rgb(' + (60 + ((v1 * 80) / 255 | 0)) + ',' + (120 + ((v2 * 80) / 255 | 0)) + ',235)'
        : 'rgb(0,' + (190 + ((v2 * 50) / 255 | 0)) + ',' + ((v1 * 210) / 255 | 0) + ')';
    }
    function draw() {
      const box = $('flame-graph');
      box.textContent = '';
      if (builtFor !== weight() || dirty) { build(); builtFor = weight(); dirty = false; }
      $('flame').dataset.drawn = '1';
      if (!root.bytes) {
        box.style.height = 'auto';
        box.appendChild(el('p', 'note', 'Nothing to draw: no memory was live at this moment.'));
        updateMatch();
        return;
      }
      const W = Math.max(box.clientWidth, 400);
      const z = zoom || root;
      const q = $('flame-search').value.trim().toLowerCase();
      const frag = document.createDocumentFragment();
      let drawn = 0, skipped = 0;
      const add = (n, x, w, anc) => {
        const d = el('div', 'fr ' + (keyPy[n.k] ? 'py' : 'native') + (anc ? ' anc' : ''));
        const name = keyName[n.k];
        d.dataset.name = name;
        d.title = name + '\n' + fmtSize(n.bytes) + ' (' + pct(n.bytes, root.bytes) + ' of ' + fmtSize(root.bytes) + ')';
        d.style.cssText = 'left:' + x.toFixed(1) + 'px;top:' + (n.depth * ROW) + 'px;width:' + w.toFixed(1) + 'px;background:' + color(name, keyPy[n.k]);
        if (w > 22) d.textContent = name.length > w / 5 ? name.slice(0, Math.ceil(w / 5)) : name;
        if (q && name.toLowerCase().includes(q)) d.classList.add('match');
        nodeOf.set(d, n);
        frag.appendChild(d);
        drawn++;
      };
      /* The root box stands for the whole moment, as in flamegraph.pl;
         clicking it zooms all the way out. */
      const r = el('div', 'fr root', 'all: ' + fmtSize(root.bytes));
      r.dataset.name = 'all';
      r.style.cssText = 'left:0;top:0;width:' + W + 'px';
      r.title = 'all\n' + fmtSize(root.bytes) + ' (100%)';
      nodeOf.set(r, root);
      frag.appendChild(r);
      const path = [];
      for (let n = z; n && n !== root; n = n.parent) path.unshift(n);
      path.forEach((n) => add(n, 0, W, n !== z));
      let maxDepth = z.depth;
      /* Children largest first, left to right, each subtree whole before
         the next (so the page reads in call order); slivers under half a
         pixel are left out, which bounds the element count for any report. */
      const scale = W / z.bytes;
      const stack = [];
      const pushKids = (n, x) => {
        if (!n.kids) return;
        const kids = [...n.kids.values()].sort((a, b) => b.bytes - a.bytes);
        const todo = [];
        for (const c of kids) {
          const w = c.bytes * scale;
          if (w < 0.5) skipped++;
          else todo.push([c, x, w]);
          x += w;
        }
        for (let i = todo.length - 1; i >= 0; i--) stack.push(todo[i]);
      };
      pushKids(z, 0);
      while (stack.length) {
        const [c, x, w] = stack.pop();
        if (drawn > 40000) { skipped++; continue; }
        add(c, x, w, false);
        if (c.depth > maxDepth) maxDepth = c.depth;
        pushKids(c, x);
      }
      box.style.height = (maxDepth + 1) * ROW + 2 + 'px';
      box.appendChild(frag);
      $('flame-info').textContent = fmtSize(root.bytes) + ' in ' + plural(root.groups, 'stack', 'stacks') +
        (skipped ? ' (' + skipped + ' too narrow to draw)' : '') + '. Click a frame to zoom into it; the frames above it stay, dimmed.';
      updateMatch();
    }
    /* The share of bytes under a matching frame, counting nested matches once. */
    function updateMatch() {
      const q = $('flame-search').value.trim().toLowerCase();
      const out = $('flame-matched');
      if (!q || !root || !root.bytes) { out.textContent = ''; return; }
      let matched = 0;
      const stack = [root];
      while (stack.length) {
        const n = stack.pop();
        if (n.k >= 0 && keyName[n.k].toLowerCase().includes(q)) { matched += n.bytes; continue; }
        if (n.kids) for (const c of n.kids.values()) stack.push(c);
      }
      out.textContent = pct(matched, root.bytes) + ' of bytes matched';
    }
    function setZoom(n) {
      zoom = n && n !== root ? n : null;
      if (zoom) $('flame').dataset.zoom = keyName[zoom.k];
      else $('flame').removeAttribute('data-zoom');
      draw();
    }
    function invalidate() {
      dirty = true;
      if (visible) draw();
    }
    function init() {
      const box = $('flame-graph');
      box.addEventListener('click', (ev) => {
        const n = nodeOf.get(ev.target);
        if (n) setZoom(n);
      });
      $('flame-reset').addEventListener('click', () => setZoom(null));
      $('flame-weight').addEventListener('change', () => { dirty = true; visible = true; draw(); });
      $('flame-search').addEventListener('input', () => { if (!visible || dirty || !root) show(); else highlight(); });
      const opts = $('flame-weight').options;
      for (const o of opts) if ((o.value === 'peak' && !PEAKS.length) || (o.value === 'denial' && !FDS.length)) o.disabled = true;
      /* Not drawn with the rest: the page is ready once the groups are
         listed, and the flame follows when its section comes into view or
         the browser is first idle, whichever is sooner. */
      if ('IntersectionObserver' in window)
        new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) show(); }, { rootMargin: '300px 0px' }).observe($('flame'));
      if ('requestIdleCallback' in window) requestIdleCallback(show, { timeout: 300 });
      else setTimeout(show, 50);
      let rt = 0;
      window.addEventListener('resize', () => { clearTimeout(rt); rt = setTimeout(() => { if (visible && root) draw(); }, 150); });
    }
    function show() {
      if (visible && !dirty && root) return;
      visible = true;
      draw();
    }
    function highlight() {
      const q = $('flame-search').value.trim().toLowerCase();
      for (const d of $('flame-graph').querySelectorAll('.fr:not(.root)')) d.classList.toggle('match', !!q && d.dataset.name.toLowerCase().includes(q));
      updateMatch();
    }
    return { init, invalidate, weight };
  })();

  /* ---- denials -------------------------------------------------------- */
  function drawDenials() {
    const sec = $('denials');
    let n = 0;
    REPORTS.forEach((rep, r) => {
      arr(rep && rep.denials).forEach((dn, i) => {
        if (!dn) return;
        n++;
        const d = el('div', 'denial');
        d.dataset.report = str(r);
        d.dataset.index = str(i);
        const who = REPORTS.length > 1 ? (D.mode === 'diff' ? (r === 0 ? 'base, ' : 'new, ') : '') + 'pid ' + str(rep.pid) + ': ' : '';
        d.appendChild(el('div', 'dhead', who + devName(dn.device) + ' at ' + fmtTime(dn.time) + ': ' + txt(dn.api) + ' of ' +
          fmtSize(num(dn.requested_bytes)) + ' refused'));
        d.appendChild(el('div', 'note', fmtSize(num(dn.live_bytes)) + ' was live' + (dn.limit_bytes != null ? ', limit ' + fmtSize(dn.limit_bytes) : '')));
        if (dn.stack) d.appendChild(el('div', 'dstack', txt(dn.stack)));
        const j = firstDenialOf(r, dn);
        if (j >= 0) {
          const f = FDS[j];
          const rf = el('div', 'refused');
          rf.appendChild(el('div', '', 'The first denial on ' + devName(f.device) + ', refused from ' + short(groupLine(f)) + ':'));
          const ls = el('div', 'lines');
          for (const k of arr(f.lines)) ls.appendChild(el('div', 'line', sline(k)));
          rf.appendChild(ls);
          d.appendChild(rf);
          const b = el('button', 'show-live', 'Show what was live then');
          b.type = 'button';
          b.addEventListener('click', () => selectMoment('denial:' + j, true));
          d.appendChild(b);
        }
        sec.appendChild(d);
      });
    });
    if (!n) sec.appendChild(el('p', 'note', 'No denials.'));
  }

  /* ---- diff ----------------------------------------------------------- */
  function drawCompare() {
    const sec = $('compare');
    const df = D.diff;
    if (!df || typeof df !== 'object') { sec.hidden = true; return; }
    sec.hidden = false;
    sec.appendChild(el('p', 'note', 'base: ' + txt(df.base && df.base.file) + ' (' + who(df.base) + ')'));
    sec.appendChild(el('p', 'note', 'new: ' + txt(df.new && df.new.file) + ' (' + who(df.new) + ')'));
    const hl = el('p', 'headline', 'Leaked: ' + fmtSize(num(df.base_leaked_bytes)) + ' → ' + fmtSize(num(df.new_leaked_bytes)) + ' (' +
      fmtSigned(num(df.delta_bytes)) + ', ' + (num(df.delta_allocations) > 0 ? '+' : '') + num(df.delta_allocations) + ' allocations)');
    sec.appendChild(hl);
    const dt = el('table');
    const hr = el('tr');
    ['device', 'name', 'base live', 'new live', 'change', 'base peak', 'new peak', 'change'].forEach((c, i) => hr.appendChild(el('th', i > 1 ? 'num' : '', c)));
    dt.appendChild(el('thead')).appendChild(hr);
    const db = dt.appendChild(el('tbody'));
    for (const d of arr(df.devices)) {
      if (!d) continue;
      const tr = el('tr', 'cmp-device');
      const dl = num(d.new_live_bytes) - num(d.base_live_bytes), dp = num(d.new_peak_bytes) - num(d.base_peak_bytes);
      [str(d.ordinal), txt(d.name), fmtSize(num(d.base_live_bytes)), fmtSize(num(d.new_live_bytes)), fmtSigned(dl),
        fmtSize(num(d.base_peak_bytes)), fmtSize(num(d.new_peak_bytes)), fmtSigned(dp)].forEach((v, i) => {
        const td = el('td', i > 1 ? 'num' : '', v);
        const dv = i === 4 ? dl : i === 7 ? dp : 0;
        if (dv) td.classList.add(dv > 0 ? 'delta-pos' : 'delta-neg');
        tr.appendChild(td);
      });
      db.appendChild(tr);
    }
    sec.appendChild(dt);

    const changes = arr(df.changes).filter((c) => c && typeof c === 'object');
    const grew = changes.filter((c) => !(num(c.delta_bytes) < 0)).sort((a, b) => num(b.delta_bytes) - num(a.delta_bytes) || num(b.new_bytes) - num(a.new_bytes));
    const shrank = changes.filter((c) => num(c.delta_bytes) < 0).sort((a, b) => num(a.delta_bytes) - num(b.delta_bytes));
    const t = el('table');
    t.id = 'changes';
    const cg = t.appendChild(el('colgroup'));
    ['c-title', 'c-n', 'c-n', 'c-n', 'c-api'].forEach((c) => cg.appendChild(el('col', c)));
    const th = el('tr');
    ['Where (your code first, then the call it made)', 'base', 'new', 'change', 'API'].forEach((c, i) => th.appendChild(el('th', i && i < 4 ? 'num' : '', c)));
    t.appendChild(el('thead')).appendChild(th);
    const more = el('button', '', '');
    more.id = 'changes-more';
    more.type = 'button';
    more.hidden = true;
    let limit = 200;
    const render = () => {
      for (const b of [...t.tBodies]) b.remove();
      let left = 0;
      for (const [name, list] of [['Grew or still held', grew], ['Shrank', shrank]]) {
        const tb = t.appendChild(el('tbody'));
        const h = el('th', '', name + ' (' + list.length + ')');
        h.colSpan = 5;
        tb.appendChild(el('tr', 'part')).appendChild(h);
        if (!list.length) { const td = el('td', 'muted', 'Nothing.'); td.colSpan = 5; tb.appendChild(el('tr')).appendChild(td); }
        list.slice(0, limit).forEach((c) => tb.appendChild(changeRow(c)));
        left += Math.max(0, list.length - limit);
        wireRows(tb, 'change', 5);
      }
      more.hidden = !left;
      more.textContent = 'show all ' + changes.length;
    };
    more.addEventListener('click', () => { limit = Infinity; render(); });
    render();
    sec.appendChild(el('h3', '', 'What changed, by stack'));
    sec.appendChild(t);
    sec.appendChild(more);
  }
  function changeRow(c) {
    const tr = el('tr', 'change');
    tr.tabIndex = 0;
    tr.dataset.delta = str(num(c.delta_bytes));
    const td = el('td', 'title');
    titleCell(td, c);
    if (multiDevice && c.device != null) td.appendChild(el('span', 'badges')).appendChild(el('span', 'badge', 'device ' + str(c.device)));
    tr.appendChild(td);
    tr.appendChild(el('td', 'base num', fmtSize(num(c.base_bytes)) + ' in ' + num(c.base_count)));
    tr.appendChild(el('td', 'new num', fmtSize(num(c.new_bytes)) + ' in ' + num(c.new_count)));
    tr.appendChild(el('td', 'delta num ' + (num(c.delta_bytes) > 0 ? 'delta-pos' : num(c.delta_bytes) < 0 ? 'delta-neg' : ''), fmtSigned(num(c.delta_bytes))));
    tr.appendChild(el('td', 'api')).appendChild(el('div', 'clamp', txt(c.api)));
    rowItem.set(tr, c);
    return tr;
  }

  /* ---- start ---------------------------------------------------------- */
  try {
    guard('header', drawHeader);
    guard('timeline', drawTimeline);
    guard('moments', buildMoments);
    guard('live', () => {
      wireRows($('groups').tBodies[0], 'group', 4);
      $('search').addEventListener('input', renderGroups);
      $('sort').addEventListener('change', renderGroups);
      $('groups-more').addEventListener('click', () => { showAll = true; renderGroups(); });
      selectMoment('end');
    });
    guard('flame', flame.init);
    guard('denials', drawDenials);
    guard('compare', drawCompare);
    for (const e of document.querySelectorAll('#title, #about .note, .chart-cap, .dhead, .dstack, button.moment'))
      if (e.textContent.length > 300) e.title = e.textContent.slice(0, 2000);
  } finally {
    document.body.dataset.ready = '1';
  }
