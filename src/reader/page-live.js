  /* ---- tooltip -------------------------------------------------------- */
  const tip = $('tooltip');
  function showTip(ev, lines) {
    tip.textContent = '';
    lines.forEach((l, i) => tip.appendChild(el('div', i === 0 ? 'tt-h' : '', l.length > 400 ? l.slice(0, 400) + '…' : l)));
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    let x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  const hideTip = () => { tip.hidden = true; };

  /* Each section draws on its own: one that fails leaves the rest usable. */
  function guard(name, fn) {
    try {
      fn();
    } catch (e) {
      console.error('cumemguard page: ' + name + ':', e);
      const s = $(name);
      if (s) s.appendChild(el('p', 'note', 'This part of the report could not be drawn.'));
    }
  }

  /* ---- header --------------------------------------------------------- */
  function reasonText(s) {
    if (s.killed_by) return 'as ' + txt(s.killed_by) + ' killed it';
    if (s.reason === 'exit') return isNum(s.exit_status) && s.exit_status >= 0 ? 'at exit (status ' + s.exit_status + ')' : 'at exit';
    if (s.reason === 'signal') return 'on a signal';
    if (s.reason === 'request') return 'on request (cmg_dump)';
    if (s.reason === 'snapshot') return 'as a snapshot while the process ran';
    return txt(s.reason) || 'for an unknown reason';
  }
  const who = (p) => 'pid ' + str(p && p.pid) + ': ' + txt(p && p.command);

  function drawHeader() {
    const about = $('about');
    let title;
    if (D.mode === 'diff' && D.diff) title = who(D.diff.base) + ' → ' + who(D.diff.new);
    else if (SOURCES.length === 1) title = who(SOURCES[0]);
    else title = plural(SOURCES.length, 'process', 'processes') + ', merged: ' + SOURCES.slice(0, 4).map(who).join('; ') + (SOURCES.length > 4 ? '; …' : '');
    $('title').textContent = title;
    document.title = 'cumemguard: ' + (title.length > 120 ? title.slice(0, 120) + '…' : title);
    const shown = SOURCES.slice(0, 20);
    for (const s of shown) {
      if (!s) continue;
      const p = el('p', 'note');
      const parts = [];
      if (SOURCES.length > 1) parts.push('pid ' + str(s.pid));
      parts.push(txt(s.file));
      if (s.hostname) parts.push('on ' + txt(s.hostname));
      const when = fmtDate(s.start_time);
      if (when) parts.push('started ' + when);
      let w = 'written ' + reasonText(s);
      if (isNum(s.end_time) && isNum(s.start_time) && s.end_time >= s.start_time) w += ', ' + fmtTime(s.end_time - s.start_time) + ' after the start';
      parts.push(w);
      p.textContent = parts.join(' · ');
      about.appendChild(p);
    }
    if (SOURCES.length > shown.length) about.appendChild(el('p', 'note', '… and ' + (SOURCES.length - shown.length) + ' more processes'));
    if (S.python_note) about.appendChild(el('p', 'note', txt(S.python_note)));

    const h = el('p', 'headline');
    h.appendChild(document.createTextNode('Leaked: '));
    h.appendChild(el('b', '', fmtSize(num(S.leaked_bytes))));
    let rest = ' in ' + plural(num(S.leaked_allocations), 'allocation', 'allocations');
    if (num(S.graph_bytes) > 0) rest += ' · held by CUDA graph memory pools: ' + fmtSize(S.graph_bytes);
    if (num(S.context_bytes) > 0) rest += ' · contexts: ' + fmtSize(S.context_bytes);
    h.appendChild(document.createTextNode(rest));
    about.appendChild(h);
    const pools = S.pools;
    if (pools && num(pools.bytes) > 0)
      about.appendChild(el('p', 'note', fmtSize(pools.bytes) + ' of it is blocks a caching allocator kept' +
        (pools.largest ? ' (mostly ' + txt(pools.largest) + ')' : '') + ': freed tensors stay reserved until the allocator releases them.'));

    const t = el('table');
    t.id = 'devices';
    const hr = el('tr');
    ['device', 'name', 'physical', 'limit', 'peak', 'live', 'allocations', 'frees', 'denied'].forEach((c, i) =>
      hr.appendChild(el('th', i > 1 ? 'num' : '', c)));
    t.appendChild(el('thead')).appendChild(hr);
    const tb = t.appendChild(el('tbody'));
    for (const d of DEVICES) {
      if (!d) continue;
      const tr = el('tr', 'device');
      tr.dataset.device = str(d.ordinal);
      const lim = d.limit_bytes == null ? 'none' : fmtSize(d.limit_bytes) + (d.limit_varies ? ' (varies)' : '');
      [str(d.ordinal), txt(d.name), fmtSize(num(d.physical_bytes)), lim, fmtSize(num(d.peak_bytes)), fmtSize(num(d.live_bytes)),
        str(num(d.allocations)), str(num(d.frees)), str(num(d.denied))].forEach((v, i) => {
        const td = el('td', i > 1 ? 'num' : '');
        td.appendChild(el('div', i === 1 ? 'clamp' : '', v));
        if (i === 1 && d.footprint) td.appendChild(el('div', 'note footprint', footprintText(d)));
        if (i === 1 && d.footprint && d.footprint.cross_check)
          td.appendChild(el('div', 'note cross-check', crossCheckText(d.footprint.cross_check)));
        if (i === 1 && d.graph_memory) td.appendChild(el('div', 'note graph-memory', graphText(d)));
        if (i === 8 && num(d.denied) > 0) td.classList.add('delta-pos');
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    }
    if (!DEVICES.length) tb.appendChild(el('tr')).appendChild(el('td', 'muted', 'No device memory was tracked.')).colSpan = 9;
    about.appendChild(t);
    const ho = S.host;
    if (ho && typeof ho === 'object')
      about.appendChild(el('p', 'note', 'Host memory (pinned and mapped): peak ' + fmtSize(num(ho.peak_bytes)) + ', live ' +
        fmtSize(num(ho.live_bytes)) + ', limit ' + (ho.limit_bytes == null ? 'none' : fmtSize(ho.limit_bytes)) + ', ' +
        plural(num(ho.allocations), 'allocation', 'allocations') + ', ' + plural(num(ho.frees), 'free', 'frees') + ', ' + num(ho.denied) + ' denied'));
  }
  /* Why nvidia-smi shows more than the program allocated. */
  function footprintText(d) {
    const fp = d.footprint, n = num(fp.contexts);
    let s = 'on the card: ';
    if (fp.context_bytes == null) {
      s += 'not measured' + (fp.why ? ' (' + txt(fp.why) + ')' : '') + '; ' + fmtSize(num(fp.allocated_bytes)) + ' allocated, ' + plural(n, 'context', 'contexts');
      if (isNum(fp.process_bytes)) s += ', ' + fmtSize(fp.process_bytes) + ' in all (NVML)';
    } else {
      if (isNum(fp.process_bytes)) s += fmtSize(fp.process_bytes) + ' = ';
      s += fmtSize(num(fp.allocated_bytes)) + ' allocated + ' + fmtSize(num(fp.context_bytes)) + ' in ' + plural(n, 'context', 'contexts');
      if (isNum(fp.unexplained_bytes)) s += ' + ' + fmtSize(fp.unexplained_bytes) + ' unexplained';
    }
    return s + '; ' + (fp.counted ? 'the caps count the context' + (n === 1 ? '' : 's') : 'the caps count allocations only');
  }
  /* NVML's count of the contexts beside the driver's free memory, as the text summary says it. */
  function crossCheckText(c) {
    const n = num(c.nvml_bytes), dr = num(c.driver_bytes);
    return 'cross-check of ' + plural(num(c.contexts), 'context', 'contexts') + ': NVML ' + fmtSize(n) +
      ", the driver's free memory " + fmtSize(dr) + ' (' + (dr >= n ? '+' : '-') + fmtSize(Math.abs(dr - n)) + ')';
  }
  function graphText(d) {
    const g = d.graph_memory;
    return 'graph memory: ' + fmtSize(num(g.reserved_bytes)) + ' reserved (high ' + fmtSize(num(g.reserved_high_bytes)) +
      '), ' + fmtSize(num(g.used_bytes)) + ' in use (high ' + fmtSize(num(g.used_high_bytes)) + '), ' +
      (g.source === 'estimate' ? "cumemguard's estimate" : "the driver's count") + '; ' + plural(num(g.launches), 'launch', 'launches') +
      ', ' + plural(num(g.uploads), 'upload', 'uploads') + ', ' + plural(num(g.trims), 'trim', 'trims');
  }

  /* ---- moments -------------------------------------------------------- */
  const moments = [];
  let current = null;
  function endItems() {
    const items = arr(S.leaks).map((g) => ({ g, driver: null }));
    for (const g of arr(S.graph)) items.push({ g, driver: 'graph memory pool' });
    for (const g of arr(S.context)) items.push({ g, driver: 'context' });
    return items;
  }
  /* What a row reads, less its sizes: its line and every badge and word
     beside it.  Groups of one moment whose rows would read the same are
     one row, at the end as at a peak or a denial. */
  function rowKey(it) {
    const g = it.g, o = (v) => (v == null ? null : str(v));
    return JSON.stringify([groupLine(g), it.driver, o(g.pool), o(g.held_by), o(g.kind),
      o(g.api), multiDevice ? o(g.device) : null]);
  }
  /* Rows as the terminal prints a composition: their bytes, allocations
     and stacks added up; members keeps the groups, for their stacks. */
  function foldItems(items) {
    const byKey = new Map(), rows = [];
    for (const it of items) {
      if (!it.g || typeof it.g !== 'object') continue;
      const k = rowKey(it);
      let row = byKey.get(k);
      if (row === undefined) {
        row = { g: Object.assign({}, it.g, { bytes: 0, count: 0, stacks: 0 }), driver: it.driver, members: [] };
        byKey.set(k, row);
        rows.push(row);
      }
      row.g.bytes += num(it.g.bytes);
      row.g.count += num(it.g.count);
      row.g.stacks++;
      row.members.push(it.g);
    }
    return rows;
  }
  const asItems = (list) => arr(list).map((g) => ({ g, driver: null }));
  function buildMoments() {
    const reasons = [...new Set(SOURCES.map((s) => txt(s && s.reason)).filter(Boolean))];
    let endBytes = SOURCES.reduce((a, s) => a + num(s && s.live_bytes), 0);
    if (!SOURCES.length) endBytes = endItems().reduce((a, it) => a + num(it.g.bytes), 0);
    const why = reasons.length ? ' (' + reasons.join(', ') + ')' : '';
    moments.push({ key: 'end', label: 'end' + why + ': ' + fmtSize(endBytes),
      heading: 'Live at the end' + why + ': ' + fmtSize(endBytes), items: () => foldItems(endItems()) });
    const pidOf = (src) => (SOURCES.length > 1 && SOURCES[src] ? ' in pid ' + str(SOURCES[src].pid) : '');
    PEAKS.forEach((p, i) => {
      if (!p) return;
      const at = devName(p.device) + ' at ' + fmtTime(p.time) + pidOf(p.source);
      moments.push({ key: 'peak:' + i, label: 'peak of ' + at + ': ' + fmtSize(num(p.live_bytes)),
        heading: 'Live at the peak of ' + at + ': ' + fmtSize(num(p.live_bytes)),
        items: () => foldItems(asItems(p.by_stack)) });
    });
    FDS.forEach((f, i) => {
      if (!f) return;
      const at = devName(f.device) + ' at ' + fmtTime(f.time) + pidOf(f.source);
      const call = txt(f.api) + ' of ' + fmtSize(num(f.requested_bytes));
      moments.push({ key: 'denial:' + i, denial: f, label: 'denial on ' + at + ': ' + call,
        heading: 'Live at the denial on ' + at + ' (' + call + ' refused): ' + fmtSize(num(f.live_bytes)),
        items: () => foldItems(asItems(f.by_stack)) });
    });
    const box = $('moments');
    for (const m of moments) {
      const b = el('button', 'moment', m.label);
      b.type = 'button';
      b.dataset.moment = m.key;
      b.addEventListener('click', () => selectMoment(m.key));
      m.button = b;
      box.appendChild(b);
    }
  }
  function selectMoment(key, scroll) {
    const m = moments.find((x) => x.key === key);
    if (!m) return;
    current = m;
    for (const x of moments) x.button.classList.toggle('selected', x === m);
    $('moment').textContent = m.heading;
    $('moment').title = m.heading.length > 300 ? m.heading.slice(0, 2000) : '';
    $('live').dataset.moment = m.key;
    const note = $('moment-note');
    note.textContent = '';
    if (m.denial) {
      const f = m.denial;
      const p = el('p', 'note clamp', 'Refused: ' + txt(f.api) + ' of ' + fmtSize(num(f.requested_bytes)) +
        (f.limit_bytes != null ? ' (limit ' + fmtSize(f.limit_bytes) + ')' : '') + ', from ' + short(groupLine(f)));
      note.appendChild(p);
    }
    if (!m.cache) m.cache = m.items();
    showAll = false;
    renderGroups();
    if (flame.weight() === 'moment') flame.invalidate();
    if (scroll) $('live').scrollIntoView({ block: 'start' });
  }

  /* ---- groups table --------------------------------------------------- */
  let showAll = false;
  const FIRST_ROWS = 200;
  const rowItem = new WeakMap();
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  /* A search looks at each distinct frame once per query, not once per
     group that holds it: big reports share most frames. */
  let fq = null, fmatch = null;
  function frameMatches(i, q) {
    if (fq !== q) { fq = q; fmatch = new Map(); }
    let m = fmatch.get(i);
    if (m === undefined) {
      const f = frame(i);
      m = [f.function, f.name, f.file, f.module, f.path].some((v) => typeof v === 'string' && v.toLowerCase().includes(q));
      fmatch.set(i, m);
    }
    return m;
  }
  function itemMatches(it, q) {
    if (it.lt === undefined) it.lt = groupLine(it.g).toLowerCase();
    if (it.lt.includes(q)) return true;
    for (const g of it.members || [it.g])
      for (const i of arr(g.frames)) if (frameMatches(i, q)) return true;
    return false;
  }
  function sortItems(list, how) {
    const byBytes = (a, b) => num(b.g.bytes) - num(a.g.bytes);
    const cmp = {
      bytes: byBytes,
      count: (a, b) => num(b.g.count) - num(a.g.count) || byBytes(a, b),
      api: (a, b) => collator.compare(str(a.g.api || a.g.kind), str(b.g.api || b.g.kind)) || byBytes(a, b),
      title: (a, b) => collator.compare(a.title || (a.title = groupLine(a.g)), b.title || (b.title = groupLine(b.g))) || byBytes(a, b),
    }[how] || byBytes;
    return list.sort(cmp);
  }
  function titleCell(td, g) {
    const full = groupLine(g), line = short(full);
    const box = el('div', 'clamp');
    const k = line.indexOf(g.title ? ' > ' : ' < ');
    box.appendChild(el('span', 'user', k > 0 ? line.slice(0, k) : line));
    if (k > 0) box.appendChild(el('span', 'rest', line.slice(k)));
    if (full.length > 200) box.title = full.slice(0, 2000);
    td.appendChild(box);
  }
  function groupRow(it) {
    const g = it.g;
    const tr = el('tr', 'group');
    tr.tabIndex = 0;
    tr.dataset.bytes = str(num(g.bytes));
    tr.dataset.count = str(num(g.count));
    const td = el('td', 'title');
    titleCell(td, g);
    const badges = el('span', 'badges');
    if (it.driver) {
      const b = badges.appendChild(el('span', 'badge driver', it.driver));
      b.title = 'Held by the driver, not a leak: it goes when the ' + (it.driver === 'context' ? 'context is destroyed' : 'graph memory is trimmed or the context goes');
    }
    if (g.stacks > 1) badges.appendChild(el('span', 'badge', str(g.stacks) + ' stacks'));
    if (g.pool) badges.appendChild(el('span', 'badge pool', 'pool block: ' + txt(g.pool)));
    if (g.held_by) badges.appendChild(el('span', 'badge held', 'held by ' + txt(g.held_by)));
    if (multiDevice && g.device != null) badges.appendChild(el('span', 'badge', 'device ' + str(g.device)));
    if (g.kind && !['device', 'graph', 'context'].includes(g.kind)) badges.appendChild(el('span', 'badge', txt(g.kind)));
    if (badges.firstChild) td.appendChild(badges);
    tr.appendChild(td);
    tr.appendChild(el('td', 'bytes num', fmtSize(num(g.bytes))));
    tr.appendChild(el('td', 'count num', str(num(g.count))));
    tr.appendChild(el('td', 'api')).appendChild(el('div', 'clamp', txt(g.api)));
    rowItem.set(tr, it);
    return tr;
  }
  /* A stack as the text summary folds it, less the numbers that differ
     between stacks read as one ("#45", "... 35 frames"). */
  const bodyKey = (g) => arr(g.lines).map((i) => sline(i).replace(/#\d+/g, '#').replace(/\.\.\. \d+/g, '... ')).join('\n');
  /* A row's groups as the text summary's blocks: one per folded stack,
     with what they add up to. */
  function blocksOf(members) {
    const byKey = new Map();
    for (const g of members) {
      const k = bodyKey(g);
      let b = byKey.get(k);
      if (b === undefined) byKey.set(k, (b = { g, bytes: 0, count: 0, stacks: 0 }));
      b.bytes += num(g.bytes);
      b.count += num(g.count);
      b.stacks++;
    }
    return [...byKey.values()].sort((a, b) => b.bytes - a.bytes);
  }
  const FIRST_BLOCKS = 50;
  /* An open row: its stack, or where its groups fold into several, each
     block of them under what it holds. */
  function stackRow(it, span) {
    const tr = el('tr', 'stack');
    const td = el('td');
    td.colSpan = span;
    tr.appendChild(td);
    const blocks = it.members ? blocksOf(it.members) : [{ g: it }];
    if (blocks.length === 1) {
      stackBlock(td, blocks[0].g);
      return tr;
    }
    const put = (from, to) => {
      for (const b of blocks.slice(from, to)) {
        const d = td.appendChild(el('div', 'block'));
        d.appendChild(el('div', 'block-head', fmtSize(b.bytes) + ' in ' + plural(b.count, 'allocation', 'allocations') +
          (b.stacks > 1 ? ', ' + str(b.stacks) + ' stacks' : '')));
        stackBlock(d, b.g);
      }
    };
    put(0, FIRST_BLOCKS);
    if (blocks.length > FIRST_BLOCKS) {
      const more = td.appendChild(el('button', 'all-frames', 'show all ' + blocks.length + ' stacks'));
      more.type = 'button';
      more.addEventListener('click', (ev) => {
        ev.stopPropagation();
        more.remove();
        put(FIRST_BLOCKS, blocks.length);
      });
    }
    return tr;
  }
  /* The folded stack first, as the terminal prints it; every frame on
     request, for when the answer is inside a library. */
  function stackBlock(td, g) {
    const lines = el('div', 'lines');
    for (const i of arr(g.lines)) lines.appendChild(el('div', 'line', sline(i)));
    if (!lines.firstChild) lines.appendChild(el('div', 'line', '(no stack)'));
    td.appendChild(lines);
    const frames = el('div', 'frames');
    frames.hidden = true;
    td.appendChild(frames);
    const meta = [];
    if (isNum(g.device)) meta.push('device ' + g.device);
    if (g.kind) meta.push(txt(g.kind) + ' memory');
    if (g.truncated) meta.push('the stack was deeper than the report keeps');
    const th = arr(g.threads).filter(Boolean);
    if (th.length) meta.push('threads: ' + th.slice(0, 8).map((t) => (t.name ? txt(t.name) + ' ' : '') + '(tid ' + str(t.tid) + ')').join(', ') + (th.length > 8 ? ', …' : ''));
    if (g.held_by) meta.push('held by ' + txt(g.held_by));
    if (meta.length) td.appendChild(el('div', 'stack-meta', meta.join(' · ')));
    const fr = arr(g.frames);
    if (fr.length) {
      const b = el('button', 'all-frames', 'all frames (' + fr.length + ')');
      b.type = 'button';
      b.addEventListener('click', (ev) => {
        ev.stopPropagation();
        if (!frames.firstChild) {
          const [lo, hi] = shownRange(g);
          fr.forEach((fi, k) => {
            const d = el('div', 'frame', frameText(fi, k));
            if (k < lo || k >= hi) d.classList.add('hidden');
            if (isPy(frame(fi))) d.classList.add('py');
            frames.appendChild(d);
          });
        }
        const all = frames.hidden;
        frames.hidden = !all;
        lines.hidden = all;
        b.textContent = all ? 'folded view' : 'all frames (' + fr.length + ')';
      });
      td.appendChild(b);
    }
  }
  function toggleStack(tr, span) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains('stack')) {
      next.remove();
      tr.classList.remove('open');
    } else {
      tr.after(stackRow(rowItem.get(tr), span));
      tr.classList.add('open');
    }
  }
  function wireRows(tbody, cls, span) {
    tbody.addEventListener('click', (ev) => {
      const tr = ev.target.closest('tr.' + cls);
      if (tr && rowItem.has(tr)) toggleStack(tr, span);
    });
    tbody.addEventListener('keydown', (ev) => {
      const tr = ev.target.closest && ev.target.closest('tr.' + cls);
      if (tr && rowItem.has(tr) && (ev.key === 'Enter' || ev.key === ' ')) { ev.preventDefault(); toggleStack(tr, span); }
    });
  }
  function renderGroups() {
    if (!current) return;
    const q = $('search').value.trim().toLowerCase();
    let list = q ? current.cache.filter((it) => itemMatches(it, q)) : current.cache.slice();
    sortItems(list, $('sort').value);
    const tbody = $('groups').tBodies[0];
    tbody.textContent = '';
    const n = showAll ? list.length : Math.min(list.length, FIRST_ROWS);
    const frag = document.createDocumentFragment();
    for (let i = 0; i < n; i++) frag.appendChild(groupRow(list[i]));
    if (!list.length) {
      const td = el('td', 'muted', q ? 'No group matches the filter.' : 'Nothing was live at this moment.');
      td.colSpan = 4;
      frag.appendChild(el('tr')).appendChild(td);
    }
    tbody.appendChild(frag);
    const bytes = list.reduce((a, it) => a + num(it.g.bytes), 0);
    const count = list.reduce((a, it) => a + num(it.g.count), 0);
    $('groups-count').textContent = plural(list.length, 'group', 'groups') + ', ' + fmtSize(bytes) + ' in ' +
      plural(count, 'allocation', 'allocations') + (q ? ' (filtered)' : '') + (n < list.length ? '; the largest ' + n + ' listed' : '');
    const more = $('groups-more');
    more.hidden = n >= list.length;
    more.textContent = 'show all ' + list.length;
  }
