// Explorer: every value was computed with the tape in Python; sliders only look values up.
// Black lines are drawn in "currentColor": the text colour of the theme (light or dark).

function render({ model, el }) {
  const d = model.get("data");
  const root = h("div", {class: "adv adv-explore", role: "group", "aria-label": "explore " + d.name});
  el.append(root);
  return d.mode === "2d" ? render2d(d, model, root) : render1d(d, model, root);
}

function render1d(d, model, root) {
  const W = 640, H = 380;
  const plot = lineplot(W, H, {label: `${d.name} with its tangent line`});
  const readout = h("div", {class: "adv-readout", "aria-live": "polite"});
  const slider = h("input", {type: "range", min: 0, max: d.x.length - 1, step: 1, class: "adv-slider",
    "aria-label": "position x"});
  const tangentLayer = s("g");
  plot.root.append(tangentLayer);
  root.append(h("div", {class: "adv-heading"}, `${d.name}(x) and its tangent line (f' from the tape)`),
    h("div", {class: "adv-sliders"}, h("label", {}, "x ", slider)), readout, plot.root);
  const series = [{xs: d.x, ys: d.f, colour: PALETTE.blue, label: `${d.name}(x)`},
    {xs: d.x, ys: d.df, colour: PALETTE.vermillion, dash: "7 4", label: `${d.name}'(x)`}];
  const get = () => { const i = model.get("step"); return i > 0 ? i : d.start; };
  function draw() {
    const i = Math.max(0, Math.min(d.x.length - 1, get()));
    const x = d.x[i], y = d.f[i], m = d.df[i];
    plot.draw(series, x, "");
    const {sx, sy} = plot.scale();
    const span = (d.x[d.x.length - 1] - d.x[0]) * 0.18;
    tangentLayer.replaceChildren(
      s("line", {x1: sx(x - span), y1: sy(y - m * span), x2: sx(x + span), y2: sy(y + m * span),
        stroke: PALETTE.green, "stroke-width": 3, class: "adv-tangent"}),
      s("circle", {cx: sx(x), cy: sy(y), r: 7, fill: PALETTE.orange, stroke: "currentColor", class: "adv-point"}));
    plot.root.append(tangentLayer);
    slider.value = i;
    readout.textContent = `x = ${fmt(x)}   ${d.name}(x) = ${fmt(y)}   ${d.name}'(x) = ${fmt(m)}   (slope of the green tangent)`;
  }
  slider.addEventListener("input", () => { model.set("step", Number(slider.value)); model.save_changes(); });
  model.on("change:step", draw);
  draw();
}

function render2d(d, model, root) {
  // The square plot, its axes' labels (the inputs' names) left and below, the colour bar on the right.
  const P = 480, L = 74, T = 16, B = 50, BAR = 120, W = L + P + BAR, H = T + P + B;
  const [xn, yn] = d.inputs || ["x", "y"];
  const [x0, x1] = d.xlim, [y0, y1] = d.ylim;
  const sx = (x) => L + (x - x0) / (x1 - x0) * P;
  const sy = (y) => T + P - (y - y0) / (y1 - y0) * P;
  const svg = s("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "adv-plot", role: "img",
    "aria-label": `contours of ${d.name} over ${xn} and ${yn} with gradient arrows and a gradient-descent path`});
  svg.append(s("rect", {x: L, y: T, width: P, height: P, class: "adv-plot-frame"}));
  const text = (x, y, words, attrs) => { const t = s("text", {x, y, ...attrs}); t.textContent = words; return t; };
  const tick = {class: "adv-plot-tick"}, axis = {class: "adv-plot-axis"};
  svg.append(text(L, T + P + 18, fmt(x0), {...tick, "text-anchor": "start"}),
    text(L + P, T + P + 18, fmt(x1), {...tick, "text-anchor": "end"}),
    text(L - 6, T + P, fmt(y0), {...tick, "text-anchor": "end"}),
    text(L - 6, T + 10, fmt(y1), {...tick, "text-anchor": "end"}),
    text(L + P / 2, H - 10, xn, {...axis, "text-anchor": "middle"}),
    text(18, T + P / 2, yn, {...axis, "text-anchor": "middle", transform: `rotate(-90 18 ${T + P / 2})`}));
  const colours = [PALETTE.blue, PALETTE.sky, PALETTE.green, PALETTE.yellow, PALETTE.orange, PALETTE.vermillion];
  const colourOf = (k) => colours[Math.floor(k / d.contours.length * colours.length)];
  if (d.contours.length) {  // the colour bar: each colour's band of contour levels, low at the bottom
    const bar = s("g", {class: "adv-colourbar", role: "img", "aria-label": `colour scale of ${d.name}`});
    const bx = L + P + 18, bw = 16, band = P / colours.length;
    colours.forEach((col, c) => bar.append(s("rect", {x: bx, y: T + P - (c + 1) * band, width: bw, height: band,
      fill: col, stroke: "#444", "stroke-width": 0.6})));
    const lo = d.contours[0].level, hi = d.contours[d.contours.length - 1].level;
    bar.append(text(bx + bw + 5, T + P, fmt(lo, 3), tick), text(bx + bw + 5, T + 10, fmt(hi, 3), tick),
      text(bx, T + P + 18, `${d.name}(${xn}, ${yn})`, {...axis, "text-anchor": "start"}));
    svg.append(bar);
  }
  d.contours.forEach((c, k) => {
    const col = colourOf(k);
    for (const pts of c.lines) {
      let p = "";
      for (let i = 0; i + 1 < pts.length; i += 2) p += (i ? "L" : "M") + sx(pts[i]).toFixed(1) + " " + sy(pts[i + 1]).toFixed(1);
      svg.append(s("path", {d: p, fill: "none", stroke: col, "stroke-width": 1.6}));
    }
  });
  // Arrows point downhill (−∇f), scaled to the grid spacing.
  const A = d.arrows;
  const norms = A.gx.map((g, i) => Math.hypot(g, A.gy[i]));
  const maxn = Math.max(...norms.filter(isFinite)) || 1;
  const cell = P / Math.sqrt(A.x.length) * 0.8;
  A.x.forEach((x, i) => {
    const n = norms[i]; if (!isFinite(n) || n === 0) return;
    const len = cell * Math.sqrt(n / maxn);
    const ux = -A.gx[i] / n, uy = A.gy[i] / n;
    const X = sx(x), Y = sy(A.y[i]);
    svg.append(s("line", {x1: X, y1: Y, x2: X + ux * len, y2: Y + uy * len, stroke: "currentColor", "stroke-opacity": 0.65, "stroke-width": 1.3}));
    svg.append(s("circle", {cx: X + ux * len, cy: Y + uy * len, r: 2.2, fill: "currentColor", "fill-opacity": 0.65}));
  });
  const path = s("path", {fill: "none", stroke: "currentColor", "stroke-width": 2.5, class: "adv-descent"});
  const startDot = s("circle", {r: 7, fill: PALETTE.orange, stroke: "currentColor"});
  const endDot = s("circle", {r: 6, fill: PALETTE.purple, stroke: "currentColor"});
  svg.append(path, startDot, endDot);
  const mk = (label, max) => h("input", {type: "range", min: 0, max, step: 1, "aria-label": label});
  const rate = mk("learning rate", d.rates.length - 1), sxS = mk(`start ${xn}`, d.sx.length - 1),
    syS = mk(`start ${yn}`, d.sy.length - 1);
  const rateL = h("span"), sxL = h("span"), syL = h("span");
  const readout = h("div", {class: "adv-readout", "aria-live": "polite"});
  root.append(h("div", {class: "adv-heading"}, `Gradient descent on ${d.name}(${xn}, ${yn})`),
    h("div", {class: "adv-sliders"}, h("label", {}, "learning rate ", rate, rateL),
      h("label", {}, `start ${xn} `, sxS, sxL), h("label", {}, `start ${yn} `, syS, syL)), readout, svg);
  const state = {r: d.rate, i: d.start[0], j: d.start[1]};
  function draw() {
    const k = (state.r * d.sy.length + state.j) * d.sx.length + state.i;
    const p = d.paths[k];
    let dd = "", last = 0;
    p.x.forEach((x, t) => { if (x === null || p.y[t] === null) return;
      dd += (dd ? "L" : "M") + sx(x).toFixed(1) + " " + sy(p.y[t]).toFixed(1); last = t; });
    path.setAttribute("d", dd);
    startDot.setAttribute("cx", sx(p.x[0])); startDot.setAttribute("cy", sy(p.y[0]));
    endDot.setAttribute("cx", sx(p.x[last])); endDot.setAttribute("cy", sy(p.y[last]));
    rate.value = state.r; sxS.value = state.i; syS.value = state.j;
    rateL.textContent = " " + d.rates[state.r]; sxL.textContent = " " + fmt(d.sx[state.i]); syL.textContent = " " + fmt(d.sy[state.j]);
    const diverged = last < p.x.length - 1;
    readout.textContent = `start f = ${fmt(p.f[0])}   after ${last} steps f = ${fmt(p.f[last])}` +
      (diverged ? "   (diverged: learning rate too large)" : "");
  }
  rate.addEventListener("input", () => { state.r = Number(rate.value); draw(); });
  sxS.addEventListener("input", () => { state.i = Number(sxS.value); draw(); });
  syS.addEventListener("input", () => { state.j = Number(syS.value); draw(); });
  draw();
}

export default { render };
