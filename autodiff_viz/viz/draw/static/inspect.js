// Graph inspector: the Graphviz picture made clickable.  The page holds the SVG once, as the
// still picture (an <img> shown where scripts do not run); this module parses it into the page,
// then a click (or Enter on a focused node) shows the node's details beside the picture (below
// it when the two do not fit side by side: the picture keeps its size), hovering or focusing a
// node shows its path.  The stepping keys (→ ← PageDown PageUp Space Backspace Home End) walk the
// nodes in the graph's order, opening each one's details, as a presenter's clicker would.

// The still's SVG text, from its data: URI (base64 of UTF-8).
function svgOf(uri) {
  const b64 = (uri || "").split(",", 2)[1] || "";
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new TextDecoder("utf-8").decode(bytes);
}

// Parse the SVG; keep drawing elements only (no scripts, no event-handler attributes).
function parseSvg(text) {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg") return null;
  for (const bad of svg.querySelectorAll("script, foreignObject, iframe")) bad.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const a of [...el.attributes]) {
      const v = a.value.trim().toLowerCase();
      if (a.name.toLowerCase().startsWith("on") || ((a.name === "href" || a.name === "xlink:href") && !v.startsWith("#")))
        el.removeAttribute(a.name);
    }
  }
  return document.importNode(svg, true);
}

function render({ model, el, still }) {
  const data = model.get("data");
  const svg = parseSvg(svgOf(still));
  const root = h("div", {class: "adv adv-inspect", role: "group", "aria-label": "inspectable graph: " + data.title});
  const hint = h("div", {class: "adv-hint"},
    "Click a node (or Tab to it and press Enter) for its value, gradients and rule; hover to see its path. "
    + "Keys → ← (PageDown PageUp, Space Backspace) Home End go from node to node, f full screen, Escape closes.");
  const full = fullscreenButton(root);
  const graphBox = h("div", {class: "adv-graph-box adv-inspect-graph"});
  const index = new Map(data.nodes.map((n, i) => [n.id, i]));
  const nodeEls = new Map(), edgeEls = [];
  let openNode = null;
  const box = detailsBox(data.details.heads, () => {
    const g = nodeEls.get(openNode);
    openNode = null;
    if (g) { g.classList.remove("adv-inspected"); g.focus(); }
  });
  root.setAttribute("tabindex", "0");
  root.append(h("div", {class: "adv-top"}, h("div", {class: "adv-heading"}, data.title), full.button), hint,
    h("div", {class: "adv-main"}, graphBox, h("div", {class: "adv-side"}, box.box)),
    srList("the graph's ops in order, with values and gradients", data.alt));
  el.append(root);
  if (!svg) { graphBox.append(h("div", {}, "(the picture could not be read)")); return; }
  svg.setAttribute("role", "group");
  svg.setAttribute("aria-label", "computation graph: " + data.title);
  for (const t of svg.querySelectorAll(":scope > title, :scope > g > title")) t.remove();  // Graphviz's "G", "%3"
  svg.classList.add("adv-svg");  // at most the box's width (the viewBox keeps its shape)
  graphBox.append(svg);

  const through = pathFinder(data.nodes, data.edges);
  function trace(id) {
    const on = id === null ? null : through(id);
    root.classList.toggle("adv-tracing", on !== null);
    for (const [nid, g] of nodeEls) g.classList.toggle("adv-path", on !== null && on.has(nid));
    for (const [g, a, b] of edgeEls) g.classList.toggle("adv-path", on !== null && on.has(a) && on.has(b));
  }
  function open(id) {
    const prev = nodeEls.get(openNode);
    if (prev) prev.classList.remove("adv-inspected");
    openNode = id;
    nodeEls.get(id).classList.add("adv-inspected");
    const i = index.get(id);
    box.show(id, data.nodes[i].label, data.details.nodes[i]);
    if (box.box.scrollIntoView) box.box.scrollIntoView({block: "nearest"});
  }
  // Graphviz names each node and edge in its <title>: "n3", "n1->n3".
  for (const g of svg.querySelectorAll("g.node")) {
    const t = g.querySelector(":scope > title");
    const id = t ? t.textContent.trim() : "";
    if (!index.has(id)) continue;
    t.remove();  // its tooltip would only say "n3"
    const n = data.nodes[index.get(id)];
    nodeEls.set(id, g);
    g.setAttribute("tabindex", "0");
    g.setAttribute("role", "button");
    nameNode(g);
    g.dataset.id = id;
    g.dataset.label = n.label;
    g.addEventListener("click", () => open(id));
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(id); }
    });
    g.addEventListener("mouseenter", () => trace(id));
    g.addEventListener("mouseleave", () => trace(null));
    g.addEventListener("focus", () => trace(id));
    g.addEventListener("blur", () => trace(null));
  }
  for (const g of svg.querySelectorAll("g.edge")) {
    const t = g.querySelector(":scope > title");
    const m = t ? /^(n\d+)->(n\d+)$/.exec(t.textContent.trim()) : null;
    if (m) { edgeEls.push([g, m[1], m[2]]); t.remove(); }
  }
  const order = data.nodes.map((n) => n.id).filter((id) => nodeEls.has(id));
  presenterKeys(root, (ev) => {
    if (ev.key === "Escape" && openNode !== null) { box.hide(); return true; }
    if (ev.key === "f" || ev.key === "F") return full.toggle();
    const move = STEP_KEYS[ev.key];
    if (move === undefined || !order.length) return false;
    const at = openNode === null ? -1 : order.indexOf(openNode);
    const last = order.length - 1;
    const to = move === "first" ? 0 : move === "last" ? last : at < 0 ? (move > 0 ? 0 : last)
      : Math.max(0, Math.min(last, at + move));
    open(order[to]);
    return true;
  });
  root.dataset.nodes = String(nodeEls.size);
}

export default { render };
