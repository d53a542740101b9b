// Step-through player: the graph is drawn once from the stored layout; each
// step only changes classes and texts.  The storyboard stores, per step, only
// what that step changes (a delta); a Replay applies them in order.

// The full state after step k of a list of steps, computed by applying deltas.
// Moving forward applies only the new steps; moving back replays from the start.
function Replay(steps, n) {
  let k = -1, S = null;
  function reset() {
    k = -1;
    S = {alive: new Array(n).fill(0), vals: new Array(n).fill(""), grads: new Array(n).fill(""),
      order: new Array(n).fill(""), panel: new Map(), trace: new Map(), results: [], fresh: new Set()};
  }
  function apply(st) {
    if (st.reset) { S.grads.fill(""); S.order.fill(""); S.panel = new Map(); S.results = []; }
    for (const i of st.alive || []) S.alive[i] = 1;
    for (const [i, t] of st.vals || []) S.vals[i] = t;
    for (const [i, t] of st.grads || []) S.grads[i] = t;
    for (const [i, t] of st.order || []) S.order[i] = t;
    S.fresh = new Set();
    for (const r of st.trace || []) { S.trace.set(r.key, r); S.fresh.add(r.key); }  // forward mode: not reset
    for (const r of st.panel || []) {
      let row = S.panel.get(r.key);
      if (!row) { row = {name: r.name, terms: [], total: "", count: 0}; S.panel.set(r.key, row); }
      row.terms.push(r.term); row.total = r.total; row.count = r.count; S.fresh.add(r.key);
    }
    if (st.results) S.results = st.results.slice();
  }
  reset();
  return function at(i) {
    if (i < k) reset();
    while (k < i) { k += 1; apply(steps[k]); }
    return S;
  };
}

// Text in a box: a long line ("∂ += 3.0 → 2.584") is squeezed to the box's width instead of
// running over its edges.  Only long texts are measured, so a step stays cheap on big graphs.
// NaN and inf in a value: drawn in their own look (look.css_rules: .adv-nonfinite-text), as the graph does.
const NONFINITE = /(^|[^a-z])(nan|-?inf)([^a-z]|$)/;

// A value's text; forward mode's "  ẋ …" after it in a tspan of the tangent's colour.
const TANGENT_MARK = "  ẋ ";
function setTangentText(t, text) {
  const cut = text.indexOf(TANGENT_MARK);
  if (cut < 0) { t.textContent = text; return; }
  const tangent = document.createElementNS("http://www.w3.org/2000/svg", "tspan");
  tangent.setAttribute("class", NONFINITE.test(text.slice(cut)) ? "adv-tangent-part adv-nonfinite-text" : "adv-tangent-part");
  tangent.textContent = text.slice(cut);
  t.replaceChildren(text.slice(0, cut), tangent);
}

function setFitted(t, text, room) {
  if (t.textContent === text) return;
  setTangentText(t, text);
  t.classList.toggle("adv-nonfinite-text", NONFINITE.test(text.split(TANGENT_MARK)[0]));  // (the tangent: its tspan)
  t.removeAttribute("textLength");
  t.removeAttribute("lengthAdjust");
  if (text.length > 14 && t.getComputedTextLength() > room) {
    t.setAttribute("textLength", room);
    t.setAttribute("lengthAdjust", "spacingAndGlyphs");
  }
}

// A value over several lines (a matrix, as a graph's box writes it): one tspan per line, the
// prefix ("= ", "∂ ") on the first, later lines indented by about its width; each line squeezed to
// the box if need be.  A one-line value is set as before.
function setLines(t, prefix, text, room, line) {
  const want = text ? prefix + text : "";
  if (t.dataset.text === want) return;
  t.dataset.text = want;
  const parts = text.split("\n");
  if (parts.length === 1) { t.replaceChildren(); setFitted(t, want, room); return; }
  t.removeAttribute("textLength");
  t.removeAttribute("lengthAdjust");
  const x = t.getAttribute("x");
  t.replaceChildren(...parts.map((p, i) => {
    const span = document.createElementNS("http://www.w3.org/2000/svg", "tspan");
    span.setAttribute("x", x);
    span.setAttribute("dy", i ? line : 0);
    setTangentText(span, i ? "\u2007\u2007" + p.replace(/^ /, "\u00a0") : prefix + p);
    return span;
  }));
  // the block centred in the box, its lines starting at one left edge (a matrix's columns line up)
  const widths = [...t.childNodes].map((span) => Math.min(room, span.getComputedTextLength()));
  const left = Number(x) - Math.max(...widths) / 2;
  t.childNodes.forEach((span, i) => {
    span.setAttribute("x", left);
    span.setAttribute("text-anchor", "start");
    if (widths[i] >= room) { span.setAttribute("textLength", room); span.setAttribute("lengthAdjust", "spacingAndGlyphs"); }
  });
}

// A gradient's terms in a table cell: all of a few, the first and last of many.
function termsText(terms) {
  if (terms.length <= 1) return terms[0] || "";
  if (terms.length <= 6) return terms.join(" + ");
  return terms.slice(0, 3).join(" + ") + " + … + " + terms[terms.length - 1] + ` (${terms.length} terms)`;
}

function render({ model, el }) {
  const data = model.get("data");
  const L = data.layout;
  const steps = data.steps;
  const linked = data.linked || null;
  const PAD = 16;

  const root = h("div", {class: "adv adv-animate", tabindex: 0, role: "group",
    "aria-label": "Step-through of the forward and backward pass: " + data.title});
  const heading = h("div", {class: "adv-heading"}, data.title);

  // --- the graph ---------------------------------------------------------
  const W = L.width + 2 * PAD, H = L.height + 2 * PAD;
  const svg = s("svg", {viewBox: `${-PAD} ${-PAD} ${W} ${H}`, width: Math.round(W * 1.1),
    height: Math.round(H * 1.1), class: "adv-graph", role: "group", "aria-label": "computation graph: " + data.title});
  const edgeEls = [];
  const gEdges = s("g"), gNodes = s("g"), gBadges = s("g");
  svg.append(gEdges, gNodes, gBadges);
  for (const e of data.edges) {
    const p = L.edges[e.id];
    let d = `M${p.points[0][0]} ${p.points[0][1]}`;
    for (let i = 1; i + 2 < p.points.length; i += 3)
      d += ` C${p.points[i][0]} ${p.points[i][1]} ${p.points[i + 1][0]} ${p.points[i + 1][1]} ${p.points[i + 2][0]} ${p.points[i + 2][1]}`;
    const g = s("g", {class: "adv-edge adv-edge-" + (e.kind || "data")});
    // gradient size as weight: the arrow's width while it carries its gradient back (style.css)
    if (e.weight) g.style.setProperty("--adv-weight", (1.25 * e.weight).toFixed(2));
    g.append(s("path", {d, class: "adv-edge-line"}));
    if (p.head.length) g.append(s("polygon", {points: p.head.map((q) => q.join(",")).join(" "), class: "adv-edge-head"}));
    if (e.label) {
      const mid = p.points[Math.floor(p.points.length / 2)];
      const t = s("text", {x: mid[0], y: mid[1] - 6, class: "adv-edge-label", "text-anchor": "middle"});
      t.textContent = e.label; g.append(t);
    }
    gEdges.append(g); edgeEls.push(g);
  }
  const nodeEls = [];
  const index = {};
  data.nodes.forEach((n, i) => {
    const p = L.nodes[n.id];
    index[n.id] = i;
    const g = s("g", {transform: `translate(${p.x - p.w / 2},${p.y - p.h / 2})`, "data-id": n.id,
      "data-label": n.label, role: "button", tabindex: 0});
    const box = s("rect", {width: p.w, height: p.h, rx: n.kind === "leaf" ? 24 : 8, class: "adv-box"});
    // an inner border, shown for a mark with a double border (look.css_rules)
    const ring = s("rect", {x: 5, y: 5, width: p.w - 10, height: p.h - 10, rx: n.kind === "leaf" ? 19 : 4,
      class: "adv-ring"});
    const lab = s("text", {x: p.w / 2, y: 22, "text-anchor": "middle", class: "adv-label"}); lab.textContent = n.label;
    const val = s("text", {x: p.w / 2, y: p.vy, "text-anchor": "middle", class: "adv-val"});
    const grad = s("text", {x: p.w / 2, y: p.gy, "text-anchor": "middle", class: "adv-grad"});
    // The order badge sits beside the node's button, not in it: its number is not part of the node's name.
    const badge = s("g", {transform: `translate(${p.x + p.w / 2 - 4},${p.y - p.h / 2 + 4})`, class: "adv-badge",
      "aria-hidden": "true", "data-for": n.id});
    badge.append(s("circle", {r: 13}));
    const bt = s("text", {y: 5, "text-anchor": "middle"}); badge.append(bt);
    g.append(box, ring, lab, val, grad);
    gBadges.append(badge);
    g.addEventListener("click", () => { openDetails(i); if (linked) { model.set("selected", n.id); model.save_changes(); } });
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); g.dispatchEvent(new MouseEvent("click")); }
    });
    g.addEventListener("mouseenter", () => trace(n.id));
    g.addEventListener("mouseleave", () => trace(null));
    g.addEventListener("focus", () => trace(n.id));
    g.addEventListener("blur", () => trace(null));
    gNodes.append(g);
    nodeEls.push({g, val, grad, badge, bt, role: n.role, box: n.box, kind: n.kind, room: p.w - 14, line: p.line});
  });
  const graphBox = h("div", {class: "adv-graph-box"}, svg);
  const fitBtn = h("button", {type: "button", class: "adv-btn adv-fit", "aria-pressed": "false",
    "aria-label": "fit the graph to its box", title: "fit the whole graph to the width of its box (press again: 100%)"},
    "⤡ fit");

  // --- the side panel ----------------------------------------------------
  const title = h("div", {class: "adv-step-title"});
  const spoken = h("div", {class: "adv-sr adv-spoken", "aria-live": "polite"});  // each step's text, read out
  const lines = h("div", {class: "adv-lines"});
  const panelBody = h("tbody");
  const panel = h("table", {class: "adv-panel"},
    h("caption", {}, "Gradients accumulated so far"),
    h("thead", {}, h("tr", {}, h("th", {}, "tensor"), h("th", {}, "contributions"), h("th", {}, "total"))),
    panelBody);
  // forward mode: the evaluation trace, one row per value with its primal and its tangent
  const traceBody = h("tbody");
  const traceTable = h("table", {class: "adv-trace"},
    h("caption", {}, "Evaluation trace (forward mode)"),
    h("thead", {}, h("tr", {}, h("th", {}, "value"), h("th", {}, "expression"), h("th", {}, "primal"),
      h("th", {}, "tangent ẋ"))),
    traceBody);
  const results = h("div", {class: "adv-results"});
  // --- a node's details (click, or Enter on a focused node) and its path (hover, focus) ----
  const details = data.details || null;
  let openNode = -1;
  const box = detailsBox(details ? details.heads : {}, () => {
    if (openNode >= 0) { nodeEls[openNode].g.classList.remove("adv-inspected"); nodeEls[openNode].g.focus(); }
    openNode = -1;
  });
  const stepsOf = new Map();  // node id -> the steps where it is the current node
  steps.forEach((st, k) => { if (st.node) (stepsOf.get(st.node) || stepsOf.set(st.node, []).get(st.node)).push(k); });
  function openDetails(i) {
    if (!details) return;
    if (openNode >= 0) nodeEls[openNode].g.classList.remove("adv-inspected");
    openNode = i;
    nodeEls[i].g.classList.add("adv-inspected");
    const n = data.nodes[i];
    // with linked views, the details of the run at the slider's point (the base run's otherwise)
    const gi = gridIndex();
    const at = linked && linked.details && gi >= 0 && gi !== linked.base ? linked.details[gi][i] : details.nodes[i];
    box.show(n.id, n.label, at, (body) => {
      const ks = stepsOf.get(n.id) || [];
      if (!ks.length) return;
      body.append(h("div", {class: "adv-d adv-d-steps", "data-section": "steps"},
        h("div", {class: "adv-d-head"}, "its steps"),
        h("div", {class: "adv-d-line"}, ...ks.map((k) => h("button", {type: "button", class: "adv-btn adv-d-step",
          onclick: () => setStep(k)}, steps[k].title)))));
    });
  }
  const through = pathFinder(data.nodes, data.edges);
  const edgeEnds = data.edges.map((e) => [e.from, e.to]);
  function trace(id) {
    const on = id === null ? null : through(id);
    root.classList.toggle("adv-tracing", on !== null);
    nodeEls.forEach((ne, i) => ne.g.classList.toggle("adv-path", on !== null && on.has(data.nodes[i].id)));
    edgeEls.forEach((g, j) => g.classList.toggle("adv-path", on !== null && on.has(edgeEnds[j][0]) && on.has(edgeEnds[j][1])
      && data.edges[j].kind !== "leave" && data.edges[j].kind !== "skipped"));
  }
  const side = h("div", {class: "adv-side"}, box.box, title, lines, traceTable, panel, results, spoken);

  // --- controls ------------------------------------------------------------
  const getStep = () => model.get("step");
  const setStep = (i) => { model.set("step", i); model.save_changes(); };
  const bar = playbar(steps.length, getStep, setStep, (i) => `step ${i + 1} / ${steps.length}`);
  const replay = Replay(steps, data.nodes.length);
  const linkedReplays = linked ? linked.steps.map((ss) => Replay(ss, data.nodes.length)) : [];

  // --- linked views: one input over a grid, a node's value and derivative ---
  let linkedBox = null, plot = null, gridSlider = null, gridLabel = null;
  if (linked && linked.grid.length) {
    gridSlider = h("input", {type: "range", min: 0, max: linked.grid.length - 1, step: 1, value: linked.base,
      class: "adv-grid-slider", "aria-label": "value of input " + linked.input});
    gridLabel = h("span", {class: "adv-grid-label"});
    gridSlider.addEventListener("input", () => { model.set("grid", Number(gridSlider.value)); model.save_changes(); });
    plot = lineplot(460, 240, {label: "value and derivative of the chosen node"});
    const hint = h("div", {class: "adv-hint"}, "Click a node to plot it against " + linked.input + ".");
    linkedBox = h("div", {class: "adv-linked"},
      h("label", {class: "adv-grid-row"}, "input " + linked.input + " ", gridSlider, gridLabel), hint, plot.root);
  }

  const full = fullscreenButton(root);
  bar.bar.append(fitBtn, full.button);
  const keys = h("div", {class: "adv-hint adv-keys"}, (details ? "Click a node (Tab, Enter) for its details, hover for "
    + "its path · " : "") + "keys → ← (PageDown PageUp, Space Backspace) Home End step, f full screen"
    + (details ? ", Escape closes" : ""));
  root.append(h("div", {class: "adv-top"}, heading, keys), h("div", {class: "adv-main"}, graphBox, side), bar.bar,
    srList("the graph's ops in order, with values and gradients", data.alt));
  if (linkedBox) root.append(linkedBox);
  el.append(root);

  const stopKeys = presenterKeys(root, (ev) => {
    if (ev.key === "Escape" && openNode >= 0) { box.hide(); return true; }
    if (ev.key === "f" || ev.key === "F") return full.toggle();
    const move = STEP_KEYS[ev.key];
    if (move === undefined) return false;
    bar.stop();
    const last = steps.length - 1;
    setStep(move === "first" ? 0 : move === "last" ? last : Math.max(0, Math.min(last, getStep() + move)));
    return true;
  });

  // --- fit or scroll: the graph keeps its layout, only its scale changes ------
  // Fit scales the whole graph down to the box's width (the SVG's viewBox does the
  // scaling); at 100% the box scrolls.  Which one a graph starts in depends on the
  // box, so it is chosen once the box has a width, unless someone chose already.
  const FIT_BELOW = 1.6;  // a graph wider than this many boxes would shrink past reading: scroll instead
  let fit = null;
  function setFit(on) {
    fit = on;
    root.classList.toggle("adv-fit-on", on);
    fitBtn.setAttribute("aria-pressed", String(on));
    follow();
  }
  function chooseFit() {
    if (graphBox.clientWidth === 0) return;
    fitBtn.hidden = svg.width.baseVal.value <= graphBox.clientWidth;  // it fits at 100%: nothing to toggle
    if (fit === null) setFit(svg.width.baseVal.value < FIT_BELOW * graphBox.clientWidth);
  }
  fitBtn.addEventListener("click", () => setFit(!fit));
  const resized = typeof ResizeObserver === "undefined" ? null
    : new ResizeObserver(() => { chooseFit(); follow(); });
  if (resized) resized.observe(graphBox);

  // --- keep the current node, and the nodes it sends to, in view ------------
  // Only the graph box scrolls (never the page), once per step, after the step is drawn.
  const reduceMotion = typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
  let followPending = false;
  function follow() {
    if (followPending) return;
    followPending = true;
    requestAnimationFrame(() => { followPending = false; scrollToFocus(); });
  }
  // One axis: where to scroll so [lo, hi] (the focus) shows, keeping [c0, c1] (the current node)
  // in view when the focus is larger than the box; no move when it already shows.
  function place(pos, view, max, lo, hi, c0, c1) {
    const m = Math.min(24, view / 10);
    if (hi - lo + 2 * m > view) { lo = c0; hi = c1; }
    if (lo >= pos + m && hi <= pos + view - m) return pos;
    return Math.max(0, Math.min(max, (lo + hi) / 2 - view / 2));
  }
  function scrollToFocus() {
    const st = steps[Math.max(0, Math.min(steps.length - 1, getStep() | 0))];
    const ids = new Set(st.recv);
    if (st.node) ids.add(st.node);
    for (const j of st.edges) { ids.add(data.edges[j].from); ids.add(data.edges[j].to); }
    if (!ids.size || graphBox.clientWidth === 0) return;
    const k = svg.getBoundingClientRect().width / W;  // pixels per layout unit, in either mode
    const box = (id) => { const p = L.nodes[id];
      return [(p.x - p.w / 2 + PAD) * k, (p.y - p.h / 2 + PAD) * k, (p.x + p.w / 2 + PAD) * k, (p.y + p.h / 2 + PAD) * k]; };
    let u = null;
    for (const id of ids) { const b = box(id);
      u = u ? [Math.min(u[0], b[0]), Math.min(u[1], b[1]), Math.max(u[2], b[2]), Math.max(u[3], b[3])] : b; }
    const c = st.node ? box(st.node) : u;
    const vw = graphBox.clientWidth, vh = graphBox.clientHeight;
    const left = place(graphBox.scrollLeft, vw, graphBox.scrollWidth - vw, u[0], u[2], c[0], c[2]);
    const top = place(graphBox.scrollTop, vh, graphBox.scrollHeight - vh, u[1], u[3], c[1], c[3]);
    if (Math.abs(left - graphBox.scrollLeft) > 1 || Math.abs(top - graphBox.scrollTop) > 1)
      graphBox.scrollTo({left, top, behavior: reduceMotion ? "auto" : "smooth"});
  }

  function gridIndex() {
    if (!linked || !linked.grid.length) return -1;
    const g = model.get("grid");
    return g === undefined || g === null || g < 0 ? linked.base : g;
  }

  function drawPlot() {
    if (!plot) return;
    const gi = gridIndex();
    // Until a node is clicked, plot the function's result: the input against itself teaches nothing.
    const sel = model.get("selected") || data.nodes[data.nodes.length - 1].id;
    const k = index[sel];
    const name = data.nodes[k].label;
    const col = (rows) => rows.map((r) => r[k]);
    plot.draw([
      {xs: linked.grid, ys: col(linked.val), colour: PALETTE.blue, label: name},
      {xs: linked.grid, ys: col(linked.dval), colour: PALETTE.vermillion, dash: "7 4", label: `d${name}/d${linked.input} (tape)`},
      {xs: linked.grid, ys: col(linked.fd), colour: "currentColor", points: true, label: "finite differences"},
    ], linked.grid[gi], `${name} against ${linked.input}`);
    nodeEls.forEach((ne, i) => ne.g.classList.toggle("adv-selected", i === k));
  }

  function draw() {
    const t0 = performance.now();
    const k = Math.max(0, Math.min(steps.length - 1, getStep() | 0));
    const st = steps[k];
    const S = replay(k);
    const gi = gridIndex();
    const alt = linked && gi >= 0 && gi !== linked.base;
    const txtStep = alt ? linked.steps[gi][k] : st;
    const T = alt ? linkedReplays[gi](k) : S;
    root.dataset.phase = st.phase;
    root.dataset.step = k;
    const recv = new Set(st.recv);
    nodeEls.forEach((ne, i) => {
      const id = data.nodes[i].id;
      let cls = `adv-node adv-${ne.kind} adv-is-${ne.box} adv-role-${ne.role}`;  // the look rules: look.css_rules
      if (!S.alive[i]) cls += " adv-pending";
      if (st.node === id) cls += " adv-current";
      if (recv.has(id)) cls += " adv-recv";
      for (const keep of ["adv-selected", "adv-inspected", "adv-path"]) if (ne.g.classList.contains(keep)) cls += " " + keep;
      ne.g.setAttribute("class", cls);
      setLines(ne.val, "= ", T.vals[i], ne.room, ne.line);
      setLines(ne.grad, "∂ ", T.grads[i], ne.room, ne.line);
      ne.bt.textContent = S.order[i];
      ne.badge.style.display = S.order[i] ? "" : "none";
      nameNode(ne.g);
    });
    const active = new Set(st.edges);
    edgeEls.forEach((g, j) => g.classList.toggle("adv-active", active.has(j)));
    title.textContent = txtStep.title;
    spoken.textContent = [txtStep.title, ...txtStep.lines].join(". ");
    lines.replaceChildren(...txtStep.lines.map((l) => h("div", {class: "adv-line"}, l)));
    const rows = [];
    for (const [key, r] of T.panel) rows.push(h("tr", {class: T.fresh.has(key) ? "adv-fresh" : ""},
      h("td", {class: "adv-name"}, r.name),
      h("td", {class: "adv-terms"}, termsText(r.terms)),
      h("td", {class: "adv-total"}, r.total)));
    panelBody.replaceChildren(...rows);
    panel.style.display = rows.length ? "" : "none";
    const trows = [];
    for (const [key, r] of T.trace) trows.push(h("tr", {class: T.fresh.has(key) ? "adv-fresh" : ""},
      h("td", {class: "adv-name"}, r.name), h("td", {class: "adv-expr"}, r.expr),
      h("td", {class: "adv-primal"}, r.value), h("td", {class: "adv-tangent"}, r.tangent)));
    traceBody.replaceChildren(...trows);
    traceTable.style.display = trows.length ? "" : "none";
    results.replaceChildren(...T.results.map((l) => h("div", {}, l)));
    bar.update();
    if (gridLabel) { gridSlider.value = gi; gridLabel.textContent = " = " + fmt(linked.grid[gi]); drawPlot(); }
    root.dataset.drawMs = (performance.now() - t0).toFixed(3);
    follow();
  }

  model.on("change:step", draw);
  model.on("change:grid", () => { draw(); if (openNode >= 0) openDetails(openNode); });
  model.on("change:selected", drawPlot);
  draw();
  chooseFit();
  return () => { bar.stop(); stopKeys(); if (resized) resized.disconnect(); };
}

export default { render };
