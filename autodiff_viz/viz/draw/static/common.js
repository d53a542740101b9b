// Shared helpers for the autodiff_viz widgets: small, dependency-free.
// Each widget's module is this file followed by its own code (see _widget.py).

const SVG_NS = "http://www.w3.org/2000/svg";

// PALETTE (the Okabe-Ito colours) is prepended from viz/draw/look.py.

// Create an HTML element: h("div", {class: "x"}, child, "text", ...)
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v);
  }
  for (const c of children) el.append(c);
  return el;
}

// Same, in the SVG namespace.
function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) el.setAttribute(k, v);
  }
  for (const c of children) el.append(c);
  return el;
}

// A number as every view writes it: the rules of fmt_number in viz/text/numbers.py (NUMBER_DIGITS, prepended
// from there, significant digits; a float keeps its ".0"; "1.5e-7" below 0.0001 and from 10^digits up).
// JSON does not tell 3 from 3.0, and every number a widget computes is a float: written as one.
function fmt(v, digits = NUMBER_DIGITS) {
  if (v === null || v === undefined) return "?";
  if (Number.isNaN(v)) return "nan";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  if (v === 0) return "0.0";
  const trim = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);
  const [mant, e] = v.toExponential(digits - 1).split("e");
  const exp = Number(e);
  if (exp < -4 || exp >= digits) return `${trim(mant)}e${exp}`;
  const fixed = trim(v.toFixed(Math.max(0, digits - 1 - exp)));
  return fixed.includes(".") ? fixed : fixed + ".0";
}

// A play/pause/step/slider/speed bar driving an integer index in 0..count-1.
// get(): the current index; set(i): move there. Returns {update, stop}.
function playbar(count, get, set, labelOf) {
  let timer = null;
  let speed = 1;
  const btn = (text, label, fn, cls) => h("button", {type: "button", class: "adv-btn " + (cls || ""),
    "aria-label": label, title: label, onclick: fn}, text);
  const stop = () => { if (timer !== null) { clearInterval(timer); timer = null; } play.textContent = "▶ play";
    play.setAttribute("aria-label", "play"); };
  const tick = () => { const i = get(); if (i >= count - 1) { stop(); return; } set(i + 1); };
  const start = () => {
    if (get() >= count - 1) set(0);
    timer = setInterval(tick, 1000 / speed);
    play.textContent = "⏸ pause"; play.setAttribute("aria-label", "pause");
  };
  const first = btn("|◀ first", "first step", () => { stop(); set(0); }, "adv-first");
  const back = btn("◀ back", "step back", () => { stop(); set(Math.max(0, get() - 1)); }, "adv-back");
  const play = btn("▶ play", "play", () => (timer === null ? start() : stop()), "adv-play");
  const next = btn("step ▶", "step forward", () => { stop(); set(Math.min(count - 1, get() + 1)); }, "adv-next");
  const last = btn("last ▶|", "last step", () => { stop(); set(count - 1); }, "adv-last");
  const slider = h("input", {type: "range", min: 0, max: Math.max(0, count - 1), step: 1, value: 0,
    class: "adv-slider", "aria-label": "step"});
  slider.addEventListener("input", () => { stop(); set(Number(slider.value)); });
  const speedSel = h("select", {class: "adv-speed", "aria-label": "speed"});
  for (const v of [0.5, 1, 2, 4, 8]) {
    const o = h("option", {value: v}, v + "×"); if (v === 1) o.selected = true; speedSel.append(o);
  }
  speedSel.addEventListener("change", () => {
    speed = Number(speedSel.value);
    if (timer !== null) { clearInterval(timer); timer = setInterval(tick, 1000 / speed); }
  });
  const counter = h("span", {class: "adv-counter", "aria-live": "off"});
  const bar = h("div", {class: "adv-controls"}, first, back, play, next, last, slider,
    h("label", {class: "adv-speed-label"}, "speed ", speedSel), counter);
  const update = () => {
    const i = get();
    slider.value = i;
    counter.textContent = labelOf ? labelOf(i) : `${i + 1} / ${count}`;
  };
  return {bar, update, stop};
}

// A small line plot in SVG: series [{xs, ys, colour, dash, label, points}], marker x.
function lineplot(width, height, opts) {
  const m = {l: 56, r: 12, t: 26, b: 34};
  const root = s("svg", {width, height, viewBox: `0 0 ${width} ${height}`, class: "adv-plot", role: "img",
    "aria-label": opts.label || "plot"});
  const gAxes = s("g"); const gData = s("g"); const gMark = s("g");
  root.append(gAxes, gData, gMark);
  let sx = (x) => x, sy = (y) => y;
  function draw(series, markerX, title) {
    gAxes.replaceChildren(); gData.replaceChildren(); gMark.replaceChildren();
    const xs = series.flatMap((q) => q.xs), ys = series.flatMap((q) => q.ys.filter((v) => v !== null && isFinite(v)));
    if (!xs.length || !ys.length) return;
    let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    if (y1 - y0 < 1e-12) { y0 -= 1; y1 += 1; }
    const pad = (y1 - y0) * 0.08; y0 -= pad; y1 += pad;
    // The left margin holds the longest y tick label (13px text: digits about 8px wide), never clipped.
    m.l = Math.max(56, 14 + 8 * Math.max(fmt(y0 + pad).length, fmt(y1 - pad).length));
    sx = (x) => m.l + (x - x0) / (x1 - x0 || 1) * (width - m.l - m.r);
    sy = (y) => height - m.b - (y - y0) / (y1 - y0) * (height - m.t - m.b);
    gAxes.append(s("rect", {x: m.l, y: m.t, width: width - m.l - m.r, height: height - m.t - m.b, class: "adv-plot-frame"}));
    if (y0 < 0 && y1 > 0) gAxes.append(s("line", {x1: m.l, x2: width - m.r, y1: sy(0), y2: sy(0), class: "adv-plot-zero"}));
    for (const [v, anchor, x, y] of [[x0, "start", sx(x0), height - 10], [x1, "end", sx(x1), height - 10]]) {
      const t = s("text", {x, y, "text-anchor": anchor, class: "adv-plot-tick"}); t.textContent = fmt(v); gAxes.append(t);
    }
    for (const v of [y0 + pad, y1 - pad]) {
      const t = s("text", {x: m.l - 6, y: sy(v) + 5, "text-anchor": "end", class: "adv-plot-tick"});
      t.textContent = fmt(v); gAxes.append(t);
    }
    const tt = s("text", {x: m.l, y: 17, class: "adv-plot-title"}); tt.textContent = title || ""; gAxes.append(tt);
    for (const q of series) {
      if (q.points) {
        q.xs.forEach((x, i) => { const y = q.ys[i]; if (y === null || !isFinite(y)) return;
          gData.append(s("circle", {cx: sx(x), cy: sy(y), r: 3.5, fill: "none", stroke: q.colour, "stroke-width": 1.5})); });
      } else {
        let d = ""; let pen = false;
        q.xs.forEach((x, i) => { const y = q.ys[i];
          if (y === null || !isFinite(y)) { pen = false; return; }
          d += (pen ? "L" : "M") + sx(x).toFixed(1) + " " + sy(y).toFixed(1); pen = true; });
        gData.append(s("path", {d, fill: "none", stroke: q.colour, "stroke-width": 2.5, "stroke-dasharray": q.dash || null}));
      }
    }
    if (markerX !== null && markerX !== undefined)
      gMark.append(s("line", {x1: sx(markerX), x2: sx(markerX), y1: m.t, y2: height - m.b, class: "adv-plot-marker"}));
    series.forEach((q, i) => {  // one legend line per series, stacked in the top right corner
      const t = s("text", {x: width - m.r - 6, y: m.t + 16 + 16 * i, "text-anchor": "end", fill: q.colour,
        class: "adv-plot-legend"});
      t.textContent = (q.points ? "○ " : "— ") + q.label; gAxes.append(t);
    });
  }
  return {root, draw, scale: () => ({sx, sy})};
}

// --- inspecting nodes: the path through a node, and a box with a node's details ---------

// Paths through a node: nodes = [{id, role}], edges = [{from, to, kind}] (data edges count).
// through(id): the ids on a path from a source to id and from id to a target, id included.
function pathFinder(nodes, edges) {
  const out = new Map(), inn = new Map();
  for (const e of edges) {
    if (e.kind && e.kind !== "data") continue;
    (out.get(e.from) || out.set(e.from, []).get(e.from)).push(e.to);
    (inn.get(e.to) || inn.set(e.to, []).get(e.to)).push(e.from);
  }
  const walk = (start, next) => {
    const seen = new Set(start), stack = [...start];
    while (stack.length) for (const b of next.get(stack.pop()) || []) if (!seen.has(b)) { seen.add(b); stack.push(b); }
    return seen;
  };
  const toTarget = walk(nodes.filter((n) => n.role === "target").map((n) => n.id), inn);
  const fromSource = walk(nodes.filter((n) => n.role === "source").map((n) => n.id), out);
  return function through(id) {
    const on = new Set([id]);
    for (const b of walk([id], out)) if (toTarget.has(b)) on.add(b);
    for (const a of walk([id], inn)) if (fromSource.has(a)) on.add(a);
    return on;
  };
}

// The details box: a node's sections [key, lines] under their headings (all text from Python).
// extra(box): optional, appends more (the player's step buttons).  Escape or × closes it.
function detailsBox(heads, onClose) {
  const title = h("div", {class: "adv-details-title"});
  const body = h("div", {class: "adv-details-body"});
  const close = h("button", {type: "button", class: "adv-btn adv-details-close", "aria-label": "close the details",
    title: "close (Escape)"}, "×");
  const box = h("section", {class: "adv-details", role: "region", "aria-live": "polite", hidden: ""},
    h("div", {class: "adv-details-head"}, title, close), body);
  let openId = null;
  function hide() { box.hidden = true; openId = null; if (onClose) onClose(); }
  close.addEventListener("click", hide);
  function show(id, label, sections, extra) {
    openId = id;
    title.textContent = label;
    body.replaceChildren(...sections.map(([key, lines]) => h("div", {class: "adv-d adv-d-" + key, "data-section": key},
      h("div", {class: "adv-d-head"}, heads[key] || key),
      ...lines.map((l) => h("div", {class: "adv-d-line"}, l)))));
    if (extra) extra(body);
    box.hidden = false;
  }
  return {box, show, hide, openId: () => openId};
}

// --- presenting: keys from the whole page, full screen ---------------------------------------

// The keys a player steps with: arrows, and what presenter clickers send (PageDown/PageUp, Space/Backspace).
const STEP_KEYS = {ArrowRight: 1, PageDown: 1, " ": 1, ArrowLeft: -1, PageUp: -1, Backspace: -1, Home: "first",
  End: "last"};

// Keys for a widget's root even after a click elsewhere on the page: a page with one such widget sends it
// every key that no other element has focus for; with several, the last one clicked or focused owns them.
// handle(ev) returns true when it used the key.  Returns a function that stops listening.
function presenterKeys(root, handle) {
  const OWNER = Symbol.for("autodiff_viz.keyOwner");  // shared by every copy of this module on the page
  root.classList.add("adv-presenter");
  const claim = () => { document[OWNER] = root; };
  root.addEventListener("pointerdown", claim);
  root.addEventListener("focusin", claim);
  function owns() {
    const all = [...document.querySelectorAll(".adv-presenter")];
    if (all.length === 1) return all[0] === root;
    return document[OWNER] === root;
  }
  function onKey(ev) {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || !root.isConnected) return;
    const t = ev.target;
    if (root.contains(t)) {
      if (t.closest("input, select, textarea")) return;  // sliders and menus move themselves
      if ((ev.key === " " || ev.key === "Enter") && t.closest("button, a[href]")) return;  // pressing a button
    } else if (!(t === document.body || t === document.documentElement || t === null) || !owns()) {
      return;  // another element has the focus: its keys are its own
    }
    if (!handle(ev)) return;
    ev.preventDefault();
    ev.stopPropagation();  // a notebook's own shortcuts (on the document) do not act on it too
  }
  // Keys inside the widget are taken on its root, before the page's handlers on the document see them.
  const outside = (ev) => { if (!root.contains(ev.target)) onKey(ev); };
  root.addEventListener("keydown", onKey);
  document.addEventListener("keydown", outside);
  return () => document.removeEventListener("keydown", outside);
}

// A full-screen button for el (the Fullscreen API); f toggles it too.  Where the page may not go full screen
// (a sandboxed frame, an old browser) the button is disabled and says why.
function fullscreenButton(el) {
  const can = () => typeof el.requestFullscreen === "function" && document.fullscreenEnabled !== false;
  const b = h("button", {type: "button", class: "adv-btn adv-full", "aria-pressed": "false",
    "aria-label": "full screen", title: "full screen (f); Escape leaves it"}, "⤢ full screen");
  function toggle() {
    if (!can()) return false;
    if (document.fullscreenElement === el) document.exitFullscreen();
    else Promise.resolve(el.requestFullscreen()).catch(() => {});
    return true;
  }
  if (!can()) { b.disabled = true; b.title = "full screen is not available in this page"; }
  b.addEventListener("click", toggle);
  document.addEventListener("fullscreenchange", () =>
    b.setAttribute("aria-pressed", String(document.fullscreenElement === el)));
  return {button: b, toggle};
}

// A node's accessible name: the texts it shows (label, value, gradient...), then what Enter does.
function nameNode(g) {
  const shown = [...g.querySelectorAll("text")].filter((t) => !t.closest("[aria-hidden='true']"))
    .map((t) => t.textContent.trim()).filter(Boolean).join(" ");
  g.setAttribute("aria-label", shown + ": show its details");
}

// A list read by screen readers only (the graph's text alternative, written in Python).
function srList(label, lines) {
  return h("ol", {class: "adv-sr", "aria-label": label}, ...(lines || []).map((l) => h("li", {}, l)));
}
