// inferbench dashboard: vanilla JS + SVG, no network. Reads the JSON in #ib-data.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("ib-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  var FILTERS = [["model", "model"], ["seq", "sequence lengths"], ["prec", "precision"],
    ["hw", "hardware"], ["fw", "framework"]];
  var state = { page: 0 };
  var PAGE = 50;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmt(v, digits) {
    if (v === null || v === undefined) return "-";
    return Number(v).toFixed(digits === undefined ? 1 : digits);
  }
  function seriesOf(p) { return D.series[p.s]; }

  function buildFilters() {
    var box = document.getElementById("filters");
    FILTERS.forEach(function (f) {
      var values = {};
      D.series.forEach(function (s) { values[s[f[0]]] = true; });
      var label = el("label", {}, f[1] + " ");
      var sel = el("select", { id: "f-" + f[0], "data-filter": f[0] });
      sel.appendChild(el("option", { value: "" }, "all"));
      Object.keys(values).sort().forEach(function (v) { sel.appendChild(el("option", { value: v }, v)); });
      sel.addEventListener("change", function () { state.page = 0; render(); });
      label.appendChild(sel);
      box.appendChild(label);
    });
  }

  function visiblePoints() {
    var want = {};
    FILTERS.forEach(function (f) { want[f[0]] = document.getElementById("f-" + f[0]).value; });
    return D.points.filter(function (p) {
      var s = seriesOf(p);
      return FILTERS.every(function (f) { return !want[f[0]] || s[f[0]] === want[f[0]]; });
    }).sort(function (a, b) { return a.s - b.s || a.c - b.c; });
  }

  function extent(values) {
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
    if (!isFinite(lo)) return [0, 1];
    if (lo === hi) { lo = lo * 0.9; hi = hi * 1.1 + 1e-9; }
    var pad = (hi - lo) * 0.05;
    return [Math.max(0, lo - pad), hi + pad];
  }

  function chart(id, points, xKey, frontKey, xLabel) {
    var W = 560, H = 360, L = 70, R = 16, T = 16, B = 44;
    var holder = document.getElementById(id);
    holder.textContent = "";
    var svg = sv("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, "class": "chart" });
    holder.appendChild(svg);
    var pts = points.filter(function (p) { return p[xKey] !== null; });
    var xs = extent(pts.map(function (p) { return p[xKey]; }));
    var ys = extent(pts.map(function (p) { return p.y; }));
    function X(v) { return L + (v - xs[0]) / (xs[1] - xs[0]) * (W - L - R); }
    function Y(v) { return H - B - (v - ys[0]) / (ys[1] - ys[0]) * (H - T - B); }
    if (pts.some(function (p) { return !p.off; })) {
      var wm = sv("text", { x: W / 2, y: H / 2, "class": "watermark",
        transform: "rotate(-20 " + W / 2 + " " + H / 2 + ")" });
      wm.textContent = "UNOFFICIAL";
      svg.appendChild(wm);
    }
    for (var i = 0; i <= 4; i++) {
      var xv = xs[0] + (xs[1] - xs[0]) * i / 4, yv = ys[0] + (ys[1] - ys[0]) * i / 4;
      var tx = sv("text", { x: X(xv), y: H - B + 16, "class": "tick", "text-anchor": "middle" });
      tx.textContent = fmt(xv, 0); svg.appendChild(tx);
      var ty = sv("text", { x: L - 6, y: Y(yv) + 4, "class": "tick", "text-anchor": "end" });
      ty.textContent = fmt(yv, 0); svg.appendChild(ty);
      svg.appendChild(sv("line", { x1: L, x2: W - R, y1: Y(yv), y2: Y(yv), "class": "grid" }));
    }
    var xl = sv("text", { x: (L + W - R) / 2, y: H - 8, "class": "axis", "text-anchor": "middle" });
    xl.textContent = xLabel; svg.appendChild(xl);
    var yl = sv("text", { x: 14, y: (T + H - B) / 2, "class": "axis", "text-anchor": "middle",
      transform: "rotate(-90 14 " + (T + H - B) / 2 + ")" });
    yl.setAttribute("dy", "0.3em");
    yl.textContent = "throughput per GPU (tok/s/GPU)"; svg.appendChild(yl);
    var bySeries = {};
    pts.forEach(function (p) { (bySeries[p.s] = bySeries[p.s] || []).push(p); });
    Object.keys(bySeries).forEach(function (s) {
      var color = COLORS[s % COLORS.length];
      var g = sv("g", { "class": "series", "data-series": D.series[s].label });
      var front = bySeries[s].filter(function (p) { return p[frontKey]; })
        .sort(function (a, b) { return a[xKey] - b[xKey]; });
      if (front.length > 1) {
        g.appendChild(sv("polyline", { "class": "front", stroke: color, points:
          front.map(function (p) { return X(p[xKey]) + "," + Y(p.y); }).join(" ") }));
      }
      bySeries[s].forEach(function (p) {
        var c = sv("circle", { cx: X(p[xKey]), cy: Y(p.y), r: 4, "class": "pt" + (p.off ? "" : " unofficial"),
          stroke: color, fill: p.off ? color : "white" });
        c.addEventListener("mouseenter", function (ev) { showTip(ev, p); });
        c.addEventListener("mouseleave", hideTip);
        g.appendChild(c);
      });
      svg.appendChild(g);
    });
  }

  function showTip(ev, p) {
    var s = seriesOf(p), tip = document.getElementById("tip");
    var lines = [
      s.label + (p.off ? "" : "  [UNOFFICIAL]"),
      "topology: " + D.strings[p.t] + "   concurrency " + p.c,
      "throughput/GPU " + fmt(p.y) + " tok/s   interactivity p50 " + fmt(p.x) + " tok/s/user",
      "E2EL p50 " + fmt(p.e, 0) + " ms   failures " + fmt(p.fr * 100, 2) + "%",
      "image: " + D.strings[p.img],
      "command: " + D.strings[p.cmd],
      "run: " + D.strings[p.run]
    ];
    tip.textContent = lines.join("\n");
    tip.style.display = "block";
    tip.style.left = (ev.pageX + 12) + "px";
    tip.style.top = (ev.pageY + 12) + "px";
  }
  function hideTip() { document.getElementById("tip").style.display = "none"; }

  function table(points) {
    var body = document.getElementById("rows");
    body.textContent = "";
    var pages = Math.max(1, Math.ceil(points.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    points.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (p) {
      var s = seriesOf(p), tr = el("tr", { "class": p.off ? "" : "unofficial" });
      [s.model, s.seq, s.hw, s.fw, s.prec, D.strings[p.t], p.c, fmt(p.y), fmt(p.x), fmt(p.e, 0),
        fmt(p.fr * 100, 2) + "%", p.off ? "official" : "unofficial", D.strings[p.run]]
        .forEach(function (v) { tr.appendChild(el("td", {}, String(v))); });
      if (p.fr > 0) tr.classList.add("failing");
      body.appendChild(tr);
    });
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages +
      " (" + points.length + " points)";
  }

  function legend(points) {
    var box = document.getElementById("legend"), stats = {};
    box.textContent = "";
    points.forEach(function (p) {
      var st = stats[p.s] = stats[p.s] || { n: 0, fr: 0, unofficial: 0 };
      st.n += 1; st.fr += p.fr; st.unofficial += p.off ? 0 : 1;
    });
    Object.keys(stats).forEach(function (s) {
      var st = stats[s], item = el("span", { "class": "legend-item" });
      var sw = el("span", { "class": "swatch" });
      sw.style.background = COLORS[s % COLORS.length];
      item.appendChild(sw);
      var text = D.series[s].label + " (" + st.n + " pts, failed " + fmt(st.fr / st.n * 100, 2) + "%" +
        (st.unofficial ? ", unofficial" : "") + ")";
      var label = el("span", {}, text);
      if (st.fr > 0) label.className = "failing";
      item.appendChild(label);
      box.appendChild(item);
    });
  }

  function render() {
    var pts = visiblePoints();
    legend(pts);
    chart("chart-inter", pts, "x", "f", "interactivity p50 (tok/s/user)");
    chart("chart-e2el", pts, "e", "fe", "E2E latency p50 (ms)");
    table(pts);
    document.getElementById("shown").textContent = pts.length + " points in " +
      Object.keys(pts.reduce(function (a, p) { a[p.s] = 1; return a; }, {})).length + " series shown";
  }

  function summary() {
    var o = D.outcomes, box = document.getElementById("summary");
    box.textContent = D.stored + " points stored; showing the latest of " + D.points.length +
      " distinct points. Jobs: " + o.total + ", failed: " + o.failed +
      (o.total ? " (" + fmt(o.failed / o.total * 100, 1) + "%)" : "") + ".";
    var list = document.getElementById("failed-jobs");
    o.failures.forEach(function (f) { list.appendChild(el("li", {}, f)); });
  }

  document.getElementById("prev").addEventListener("click", function () {
    state.page = Math.max(0, state.page - 1); render(); });
  document.getElementById("next").addEventListener("click", function () {
    state.page += 1; render(); });
  buildFilters();
  summary();
  render();
  document.body.setAttribute("data-ready", "1");
})();
