// Graph inspector: the Graphviz picture made clickable.  The page holds the SVG once, as the
// still picture (an <img> shown where scripts do not run); this module parses it into the page,
// then a click (or Enter on a focused node) shows the node's details beside the picture (below
// it when the two do not fit side by side: the picture keeps its size), hovering or focusing a
// node shows its path.

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
    "Click a node (or Tab to it and press Enter) for its value, gradients and rule; hover to see its path. Escape closes.");
  const graphBox = h("div", {class: "adv-graph-box adv-inspect-graph"});
  const index = new Map(data.nodes.map((n, i) => [n.id, i]));
  const nodeEls = new Map(), edgeEls = [];
  let openNode = null;
  const box = detailsBox(data.details.heads, () => {
    const g = nodeEls.get(openNode);
    openNode = null;
    if (g) { g.classList.remove("adv-inspected"); g.focus(); }
  });
  root.append(h("div", {class: "adv-heading"}, data.title), hint,
    h("div", {class: "adv-main"}, graphBox, h("div", {class: "adv-side"}, box.box)));
  el.append(root);
  if (!svg) { graphBox.append(h("div", {}, "(the picture could not be read)")); return; }
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
    g.setAttribute("aria-label", n.label + ": show its details");
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
  root.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && openNode !== null) { box.hide(); ev.preventDefault(); }
  });
  root.dataset.nodes = String(nodeEls.size);
}

export default { render };
