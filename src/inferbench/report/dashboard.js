// inferbench dashboard: draws the embedded data (#ib-data) with the embedded plotly.js.
// No network: every chart, table and view is built from the data in this file.
(function () {
  "use strict";
  var T0 = performance.now();  // plotly.js is parsed by now: what follows is the page's own work
  var D = JSON.parse(document.getElementById("ib-data").textContent);
  var P = D.points, S = D.series, STR = D.strings;
  var N = P.s.length;
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"];
  // series fields that filter; a field shows only when it has more than one value
  var FILTERS = [["model", "model"], ["seq", "isl/osl"], ["hw", "hardware"], ["fw", "framework"],
    ["prec", "precision"], ["disagg", "disagg"], ["spec", "spec decoding"]];
  var PAGE = 50;
  var PLOTLY_CONFIG = { displaylogo: false, responsive: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"] };
  var state = { view: "curves", y: D.axes.y[0].key, x: D.axes.x[0].key, logx: null, logy: null,
    f: {}, hide: {}, sort: null, desc: false, q: "", page: 0, hs: null, at: {} };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "-";
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    if (a >= 100) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toPrecision(3);
  }
  function pct(v, d) { return v === null || v === undefined ? "-" : (v * 100).toFixed(d === undefined ? 1 : d) + "%"; }
  function s(i) { return STR[i]; }
  function axisOf(table, key) { return D.axes[table].filter(function (a) { return a.key === key; })[0]; }
  function color(si) { return COLORS[si % COLORS.length]; }
  function frontBit() {
    var xi = D.axes.x.map(function (a) { return a.key; }).indexOf(state.x);
    var yi = D.axes.y.map(function (a) { return a.key; }).indexOf(state.y);
    return 1 << (xi * D.axes.y.length + yi);
  }

  // ---- URL state: the fragment holds everything a shared link needs ----
  function saveState() {
    var q = new URLSearchParams();
    q.set("view", state.view); q.set("y", state.y); q.set("x", state.x);
    if (state.logx !== null) q.set("logx", state.logx ? "1" : "0");
    if (state.logy !== null) q.set("logy", state.logy ? "1" : "0");
    Object.keys(state.f).forEach(function (k) { if (state.f[k]) q.set("f." + k, state.f[k]); });
    var hidden = Object.keys(state.hide).filter(function (k) { return state.hide[k]; });
    if (hidden.length) q.set("hide", hidden.join(","));
    if (state.sort) { q.set("sort", state.sort); if (state.desc) q.set("desc", "1"); }
    if (state.q) q.set("q", state.q);
    if (state.page) q.set("page", String(state.page));
    if (state.hs !== null) q.set("hs", String(state.hs));
    var text = "#" + q.toString();
    try { history.replaceState(null, "", text); } catch (e) { location.hash = text; }
  }
  function loadState() {
    var q = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (q.get("view")) state.view = q.get("view");
    if (q.get("y") && axisOf("y", q.get("y"))) state.y = q.get("y");
    if (q.get("x") && axisOf("x", q.get("x"))) state.x = q.get("x");
    if (q.has("logx")) state.logx = q.get("logx") === "1";
    if (q.has("logy")) state.logy = q.get("logy") === "1";
    q.forEach(function (v, k) { if (k.indexOf("f.") === 0) state.f[k.slice(2)] = v; });
    (q.get("hide") || "").split(",").forEach(function (k) { if (k !== "") state.hide[k] = true; });
    state.sort = q.get("sort"); state.desc = q.get("desc") === "1";
    state.q = q.get("q") || ""; state.page = parseInt(q.get("page") || "0", 10) || 0;
    if (q.has("hs")) state.hs = parseInt(q.get("hs"), 10);
  }
  function logX() { return state.logx === null ? axisOf("x", state.x).log : state.logx; }
  function logY() { return state.logy === null ? axisOf("y", state.y).log : state.logy; }

  // ---- header ----
  function summary() {
    var o = D.outcomes;
    document.getElementById("generated").textContent = "Generated " + D.generated + ". " +
      D.stored + " points stored; the curves show the latest of " + D.distinct + " distinct points.";
    var box = document.getElementById("summary");
    box.textContent = "";
    box.appendChild(el("span", {}, "Jobs: " + o.total + ", failed: " + o.failed +
      (o.total ? " (" + (o.failed / o.total * 100).toFixed(1) + "%)" : "") + "."));
    box.firstChild.className = o.failed ? "bad" : "good";
    var statuses = Object.keys(o.by_status).map(function (k) { return k + " " + o.by_status[k]; });
    if (statuses.length) box.appendChild(el("span", { "class": "note" }, "  by status: " + statuses.join(", ")));
    var list = document.getElementById("failed-jobs");
    o.failures.forEach(function (f) { list.appendChild(el("li", {}, f)); });
    document.getElementById("failed-box").hidden = o.failures.length === 0;
    if (o.failures.length) document.getElementById("failed-box").open = true;
  }

  // ---- controls ----
  function buildControls() {
    var box = document.getElementById("filters");
    FILTERS.forEach(function (f) {
      var values = {};
      S.forEach(function (row) { values[String(row[f[0]])] = true; });
      var keys = Object.keys(values).sort();
      if (keys.length < 2) return;
      var label = el("label", {}, f[1] + " ");
      var sel = el("select", { id: "f-" + f[0] });
      sel.appendChild(el("option", { value: "" }, "all"));
      keys.forEach(function (v) { sel.appendChild(el("option", { value: v }, v)); });
      sel.value = state.f[f[0]] || "";
      sel.addEventListener("change", function () { state.f[f[0]] = sel.value; state.page = 0; render(); });
      label.appendChild(sel);
      box.appendChild(label);
    });
    [["y", "y"], ["x", "x"]].forEach(function (pair) {
      var sel = document.getElementById(pair[0]);
      D.axes[pair[1]].forEach(function (a) { sel.appendChild(el("option", { value: a.key }, a.label)); });
      sel.value = state[pair[0]];
      sel.addEventListener("change", function () {
        state[pair[0]] = sel.value;
        if (pair[0] === "x") state.logx = null; else state.logy = null;
        render();
      });
    });
    ["logx", "logy"].forEach(function (id) {
      var box2 = document.getElementById(id);
      box2.addEventListener("change", function () { state[id] = box2.checked; render(); });
    });
    document.querySelectorAll("#tabs button").forEach(function (b) {
      b.addEventListener("click", function () { state.view = b.getAttribute("data-view"); render(); });
    });
    var filter = document.getElementById("table-filter");
    filter.value = state.q;
    filter.addEventListener("input", function () { state.q = filter.value; state.page = 0; renderTable(); saveState(); });
    document.getElementById("prev").addEventListener("click", function () {
      state.page = Math.max(0, state.page - 1); renderTable(); saveState(); });
    document.getElementById("next").addEventListener("click", function () {
      state.page += 1; renderTable(); saveState(); });
    document.getElementById("h-series").addEventListener("change", function (ev) {
      state.hs = parseInt(ev.target.value, 10); renderHistory(); saveState(); });
  }

  function seriesShown(si) {
    var row = S[si];
    return FILTERS.every(function (f) { var want = state.f[f[0]]; return !want || String(row[f[0]]) === want; });
  }
  function seriesVisible(si) { return seriesShown(si) && !state.hide[si]; }

  function renderLegend() {
    var box = document.getElementById("legend");
    box.textContent = "";
    S.forEach(function (row, si) {
      if (!seriesShown(si)) return;
      var b = el("button", { "class": "series-toggle", "data-series": String(si),
        "aria-pressed": state.hide[si] ? "false" : "true", title: row.label });
      var sw = el("span", { "class": "swatch" }); sw.style.background = color(si);
      b.appendChild(sw); b.appendChild(document.createTextNode(row.variant + " · " + row.facet));
      b.addEventListener("click", function () { state.hide[si] = !state.hide[si]; render(); });
      box.appendChild(b);
    });
  }

  // ---- curves ----
  function hoverText(i, ya, xa) {
    var row = S[P.s[i]];
    return [
      "<b>" + row.label + "</b>" + (P.off[i] ? "" : "  [UNOFFICIAL]"),
      "topology " + s(P.t[i]) + ", concurrency " + P.c[i],
      ya.short + " " + fmt(P.y[ya.key][i]) + "   " + xa.short + " " + fmt(P.x[xa.key][i]),
      "failed " + pct(P.fr[i], 2) + "   status " + s(P.st[i]),
      "image " + s(P.img[i]),
      "run " + s(P.run[i]) + "   date " + s(P.date[i]) + "   commit " + s(P.commit[i]),
      "run dir " + s(P.dir[i]) + "  (click for the link)"
    ].join("<br>");
  }

  function facetTraces(idx, ya, xa, bit) {
    var bySeries = {};
    idx.forEach(function (i) { (bySeries[P.s[i]] = bySeries[P.s[i]] || []).push(i); });
    var traces = [];
    Object.keys(bySeries).map(Number).sort(function (a, b) { return a - b; }).forEach(function (si) {
      var pts = bySeries[si].filter(function (i) { return P.x[xa.key][i] !== null && P.y[ya.key][i] !== null; });
      if (!pts.length) return;
      var front = pts.filter(function (i) { return P.fm[i] & bit; })
        .sort(function (a, b) { return P.x[xa.key][a] - P.x[xa.key][b]; });
      var rest = pts.filter(function (i) { return !(P.fm[i] & bit); });
      [[front, "lines+markers", 1.0, "frontier"], [rest, "markers", 0.28, "dominated"]].forEach(function (part) {
        if (!part[0].length) return;
        traces.push({
          type: "scatter", mode: part[1], name: S[si].variant, legendgroup: String(si),
          x: part[0].map(function (i) { return P.x[xa.key][i]; }),
          y: part[0].map(function (i) { return P.y[ya.key][i]; }),
          customdata: part[0],
          text: part[0].map(function (i) { return hoverText(i, ya, xa); }),
          hovertemplate: "%{text}<extra></extra>",
          opacity: part[2],
          line: { color: color(si), width: 2 },
          marker: { color: color(si), size: 8,
            symbol: part[0].map(function (i) { return P.off[i] ? "circle" : "circle-open"; }),
            line: { width: 1.5, color: color(si) } },
          meta: { series: si, part: part[3] }
        });
      });
    });
    return traces;
  }

  function renderCurves(visible) {
    var ya = axisOf("y", state.y), xa = axisOf("x", state.x), bit = frontBit();
    var byFacet = {};
    visible.forEach(function (i) { var f = S[P.s[i]].facet; (byFacet[f] = byFacet[f] || []).push(i); });
    var holder = document.getElementById("facets");
    holder.querySelectorAll(".plot").forEach(function (p) { Plotly.purge(p); });
    holder.textContent = "";
    Object.keys(byFacet).sort().forEach(function (facet) {
      var box = el("div", { "class": "facet", "data-facet": facet });
      box.appendChild(el("h3", {}, facet));
      var plot = el("div", { "class": "plot" });
      box.appendChild(plot);
      var at = el("div", { "class": "at" });
      box.appendChild(at);
      holder.appendChild(box);
      var traces = facetTraces(byFacet[facet], ya, xa, bit);
      var unofficial = byFacet[facet].some(function (i) { return !P.off[i]; });
      var layout = {
        margin: { l: 70, r: 12, t: 8, b: 46 }, hovermode: "closest", showlegend: false,
        xaxis: { title: { text: xa.label }, type: logX() ? "log" : "linear", zeroline: false },
        yaxis: { title: { text: ya.label }, type: logY() ? "log" : "linear", zeroline: false,
          rangemode: logY() ? "normal" : "tozero" },
        font: { family: "system-ui, sans-serif", size: 11 },
        annotations: unofficial ? [{ text: "UNOFFICIAL", xref: "paper", yref: "paper", x: 0.5, y: 0.5,
          showarrow: false, textangle: -20, opacity: 0.1, font: { size: 56, color: "#c00" } }] : []
      };
      if (!traces.length) {
        layout.annotations.push({ text: "no " + ya.short + " values for these points", xref: "paper",
          yref: "paper", x: 0.5, y: 0.6, showarrow: false });
      }
      Plotly.newPlot(plot, traces, layout, PLOTLY_CONFIG);
      plot.on("plotly_click", function (ev) { if (ev.points.length) showDetail(ev.points[0].customdata); });
      renderAt(at, facet);
    });
    var note = axisOf("y", state.y).note;
    document.getElementById("axis-note").textContent = note;
    document.getElementById("logx").checked = logX();
    document.getElementById("logy").checked = logY();
  }

  // equal-interactivity comparison of one facet, for the chosen y metric
  function renderAt(box, facet) {
    var rows = ((D.at[facet] || {})[state.y] || []);
    box.textContent = "";
    if (!rows.length) return;
    var label = el("label", {}, "at interactivity ");
    var sel = el("select", { "class": "at-target" });
    rows.forEach(function (r, k) { sel.appendChild(el("option", { value: String(k) }, r.at + " tok/s/user")); });
    var pick = state.at[facet];
    if (pick === undefined || pick >= rows.length) pick = Math.floor((rows.length - 1) / 2);
    sel.value = String(pick);
    label.appendChild(sel);
    box.appendChild(label);
    var out = el("div");
    box.appendChild(out);
    function draw() {
      var r = rows[parseInt(sel.value, 10)];
      out.textContent = "";
      out.appendChild(el("div", { "class": "sentence" }, r.sentence || "only one series reaches " + r.at + " tok/s/user"));
      var higher = axisOf("y", state.y).higher;
      var vals = r.values.filter(function (v) { return seriesVisible(v[0]); })
        .sort(function (a, b) { return higher ? b[1] - a[1] : a[1] - b[1]; });
      if (!vals.length) return;
      var best = vals[0][1];
      var t = el("table", { "class": "at-table" });
      vals.forEach(function (v) {
        var tr = el("tr");
        var name = el("td"); var sw = el("span", { "class": "swatch" }); sw.style.background = color(v[0]);
        name.appendChild(sw); name.appendChild(document.createTextNode(S[v[0]].variant));
        tr.appendChild(name);
        tr.appendChild(el("td", { "class": "num" }, fmt(v[1]) + " " + axisOf("y", state.y).short));
        tr.appendChild(el("td", { "class": "num" }, (v[1] / best).toFixed(2) + "x of best"));
        t.appendChild(tr);
      });
      out.appendChild(t);
    }
    sel.addEventListener("change", function () { state.at[facet] = parseInt(sel.value, 10); draw(); });
    draw();
  }

  function showDetail(i) {
    var box = document.getElementById("detail");
    box.textContent = "";
    var row = S[P.s[i]];
    box.appendChild(document.createTextNode([row.label + (P.off[i] ? "" : "  [UNOFFICIAL]"),
      "topology " + s(P.t[i]) + "  concurrency " + P.c[i] + "  status " + s(P.st[i]) + "  failed " + pct(P.fr[i], 2),
      "image " + s(P.img[i]), "run " + s(P.run[i]) + "  tag " + s(P.tag[i]) + "  date " + s(P.date[i]) +
      "  commit " + s(P.commit[i]), ""].join("\n")));
    if (s(P.dir[i]) !== "-") box.appendChild(el("a", { href: s(P.dir[i]), id: "detail-link" }, "open the run directory"));
    box.appendChild(document.createTextNode("   "));
    var close = el("button", {}, "close");
    close.addEventListener("click", function () { box.style.display = "none"; });
    box.appendChild(close);
    box.style.display = "block";
  }

  // ---- table ----
  var COLUMNS = [
    ["model", "model", function (i) { return S[P.s[i]].model; }],
    ["seq", "isl/osl", function (i) { return S[P.s[i]].seq; }],
    ["hw", "hardware", function (i) { return S[P.s[i]].hw; }],
    ["fw", "framework", function (i) { return S[P.s[i]].fw; }],
    ["prec", "precision", function (i) { return S[P.s[i]].prec; }],
    ["topo", "topology", function (i) { return s(P.t[i]); }],
    ["conc", "conc", function (i) { return P.c[i]; }, true]
  ];
  function tableColumns() {
    var cols = COLUMNS.slice();
    var ya = axisOf("y", state.y);
    cols.push(["y", ya.short, function (i) { return P.y[ya.key][i]; }, true]);
    D.axes.x.forEach(function (xa) { cols.push(["x." + xa.key, xa.short, function (i) { return P.x[xa.key][i]; }, true]); });
    cols.push(["fr", "failed", function (i) { return P.fr[i]; }, true]);
    cols.push(["st", "status", function (i) { return s(P.st[i]); }]);
    cols.push(["off", "official", function (i) { return P.off[i] ? "official" : "unofficial"; }]);
    cols.push(["run", "run", function (i) { return s(P.run[i]); }]);
    cols.push(["date", "date", function (i) { return s(P.date[i]); }]);
    return cols;
  }
  var visibleIdx = [];
  function renderTable() {
    var cols = tableColumns();
    var head = document.getElementById("points-head");
    head.textContent = "";
    cols.forEach(function (c) {
      var th = el("th", { "data-col": c[0] }, c[1]);
      if (state.sort === c[0]) th.className = state.desc ? "sorted-desc" : "sorted-asc";
      th.addEventListener("click", function () {
        if (state.sort === c[0]) state.desc = !state.desc; else { state.sort = c[0]; state.desc = false; }
        renderTable(); saveState();
      });
      head.appendChild(th);
    });
    var rows = visibleIdx;
    if (state.q) {
      var words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
      rows = rows.filter(function (i) {
        var text = cols.map(function (c) { return String(c[2](i)); }).join(" ").toLowerCase();
        return words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    }
    var sortCol = cols.filter(function (c) { return c[0] === state.sort; })[0];
    if (sortCol) {
      var num = sortCol[3];
      rows = rows.slice().sort(function (a, b) {
        var va = sortCol[2](a), vb = sortCol[2](b);
        if (va === null) return 1; if (vb === null) return -1;
        var r = num ? va - vb : String(va).localeCompare(String(vb), "en", { numeric: true });
        return state.desc ? -r : r;
      });
    }
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var body = document.getElementById("rows");
    body.textContent = "";
    rows.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (i) {
      var tr = el("tr", { "class": (P.off[i] ? "" : "unofficial") + (P.fr[i] > 0 ? " failing" : "") });
      cols.forEach(function (c) {
        var v = c[2](i);
        var text = c[0] === "fr" ? pct(v, 2) : (c[3] && c[0] !== "conc" ? fmt(v) : String(v));
        tr.appendChild(el("td", { "class": (c[3] ? "num" : "") + (c[0] === "fr" ? " fr" : "") }, text));
      });
      body.appendChild(tr);
    });
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages +
      " (" + rows.length + " points)";
  }

  // ---- history ----
  function renderHistory() {
    var H = D.history, ya = axisOf("y", state.y), yi = D.axes.y.indexOf(ya);
    var sel = document.getElementById("h-series");
    var candidates = {};
    H.configs.forEach(function (c) { if (seriesShown(c.s)) candidates[c.s] = true; });
    var list = Object.keys(candidates).map(Number).sort(function (a, b) { return a - b; });
    sel.textContent = "";
    list.forEach(function (si) { sel.appendChild(el("option", { value: String(si) }, S[si].label)); });
    if (state.hs === null || list.indexOf(state.hs) < 0) {
      // default: the series with the most runs behind it
      var runsOf = {};
      H.cfg.forEach(function (c, k) { var si = H.configs[c].s; (runsOf[si] = runsOf[si] || {})[H.run[k]] = true; });
      state.hs = list.length ? list.reduce(function (best, si) {
        return Object.keys(runsOf[si] || {}).length > Object.keys(runsOf[best] || {}).length ? si : best; }, list[0]) : null;
    }
    sel.value = String(state.hs);
    var chart = document.getElementById("h-chart");
    Plotly.purge(chart);
    var body = document.getElementById("h-rows");
    body.textContent = "";
    document.getElementById("h-metric").textContent = ya.short;
    if (state.hs === null) return;
    var byCfg = {};
    H.cfg.forEach(function (c, k) { if (H.configs[c].s === state.hs) (byCfg[c] = byCfg[c] || []).push(k); });
    var dated = Object.keys(byCfg).every(function (c) { return byCfg[c].every(function (k) { return s(H.date[k]) !== "-"; }); });
    function xOf(k) { return dated ? s(H.date[k]) : s(H.run[k]); }
    var traces = [], regX = [], regY = [], regText = [];
    Object.keys(byCfg).map(Number).forEach(function (c, n) {
      var ks = byCfg[c], cfg = H.configs[c];
      var name = cfg.t + " conc " + cfg.c;
      var text = ks.map(function (k) {
        return "<b>" + name + "</b><br>" + ya.short + " " + fmt(H.y[ya.key][k]) + "<br>run " + s(H.run[k]) +
          "   tag " + s(H.tag[k]) + "<br>date " + s(H.date[k]) + "   commit " + s(H.commit[k]) + "<br>image " + s(H.img[k]);
      });
      traces.push({ type: "scatter", mode: "lines+markers", name: name, x: ks.map(xOf),
        y: ks.map(function (k) { return H.y[ya.key][k]; }), text: text, hovertemplate: "%{text}<extra></extra>",
        line: { color: COLORS[n % COLORS.length] }, marker: { size: 7 } });
      var prev = null;
      ks.forEach(function (k) {
        var v = H.y[ya.key][k], reg = (H.reg[k] >> yi) & 1;
        if (reg) { regX.push(xOf(k)); regY.push(v); regText.push("regression: " + text[ks.indexOf(k)]); }
        var tr = el("tr");
        [name, s(H.run[k]), s(H.date[k]), s(H.tag[k]), s(H.img[k]), s(H.commit[k])].forEach(function (t) {
          tr.appendChild(el("td", {}, t)); });
        tr.appendChild(el("td", { "class": "num" }, fmt(v)));
        var change = prev !== null && v !== null && prev ? (v - prev) / Math.abs(prev) : null;
        tr.appendChild(el("td", { "class": "num" + (reg ? " regression" : "") }, change === null ? "" : (change >= 0 ? "+" : "") + pct(change)));
        tr.appendChild(el("td", { "class": reg ? "regression" : "" }, reg ? "regression" : ""));
        if (reg) tr.className = "reg-row";
        body.appendChild(tr);
        prev = v;
      });
    });
    if (regX.length) {
      traces.push({ type: "scatter", mode: "markers", name: "regression", x: regX, y: regY, text: regText,
        hovertemplate: "%{text}<extra></extra>", marker: { symbol: "x", size: 14, color: "#d00", line: { width: 1 } } });
    }
    Plotly.newPlot(chart, traces, {
      margin: { l: 70, r: 12, t: 8, b: 60 }, hovermode: "closest", showlegend: true,
      legend: { orientation: "h", y: -0.25 },
      xaxis: { title: { text: dated ? "run date" : "run" }, type: dated ? "date" : "category" },
      yaxis: { title: { text: ya.label }, type: logY() ? "log" : "linear" },
      font: { family: "system-ui, sans-serif", size: 11 }
    }, PLOTLY_CONFIG);
  }

  // ---- compare ----
  function renderCompare() {
    var C = D.compare;
    var summaryBox = document.getElementById("cmp-summary");
    summaryBox.textContent = "";
    if (!C) { summaryBox.appendChild(el("p", {}, "One run in the store: nothing to compare yet.")); return; }
    summaryBox.appendChild(el("h2", {}, "HEAD " + C.head + " vs BASE " + C.base));
    summaryBox.appendChild(el("p", {}, C.rows.length + " matched points: " + C.counts.regression +
      " regressions, " + C.counts.improvement + " improvements, " + C.counts.noise +
      " within noise, " + C.counts.unjudged + " not judged. A change counts only when its " +
      (C.confidence * 100).toFixed(0) + "% bootstrap interval [in brackets] lies beyond the ±" +
      (C.threshold * 100).toFixed(0) + "% tolerance."));
    var at = document.getElementById("cmp-at");
    at.textContent = "";
    C.at.forEach(function (a) {
      var li = el("li", {}, "at " + a.at + " tok/s/user, " + a.series + ": head " + fmt(a.head) +
        " tok/s/GPU, " + a.ratio.toFixed(2) + "x base (" + fmt(a.base) + ")");
      li.className = a.ratio < 1 - C.threshold ? "cell-regression" : (a.ratio > 1 + C.threshold ? "cell-improvement" : "");
      at.appendChild(li);
    });
    var head = document.getElementById("cmp-head");
    head.textContent = "";
    ["verdict", "point"].concat(C.metrics.map(function (m) { return m.label; })).forEach(function (h) {
      head.appendChild(el("th", {}, h)); });
    var body = document.getElementById("cmp-rows");
    body.textContent = "";
    C.rows.forEach(function (r) {
      if (r.s !== null && !seriesShown(r.s)) return;
      var tr = el("tr", { "class": "cmp-" + r.verdict });
      tr.appendChild(el("td", { "class": r.verdict }, r.verdict));
      tr.appendChild(el("td", {}, r.label));
      r.cells.forEach(function (c, k) {
        var signed = function (v) { return (v >= 0 ? "+" : "") + pct(v); };
        var ci = c[4] === null || c[4] === undefined ? "" : " [" + signed(c[4]) + ", " + signed(c[5]) + "]";
        var text = c[2] === null ? "-" : (C.metrics[k].name === "failure_rate" ? pct(c[0]) + " → " + pct(c[1]) + ci :
          fmt(c[0]) + " → " + fmt(c[1]) + " (" + signed(c[2]) + ci + ")");
        tr.appendChild(el("td", { "class": "num " + (c[3] === "noise" || c[3] === "unjudged" ? "" : c[3]) }, text));
      });
      body.appendChild(tr);
    });
    document.getElementById("cmp-only").textContent = C.only_base.length + " points only in base, " +
      C.only_head.length + " only in head.";
    document.getElementById("cmp-md").textContent = C.markdown;
  }

  // ---- everything ----
  function render() {
    visibleIdx = [];
    for (var i = 0; i < N; i++) if (seriesVisible(P.s[i])) visibleIdx.push(i);
    document.querySelectorAll("#tabs button").forEach(function (b) {
      b.setAttribute("aria-selected", b.getAttribute("data-view") === state.view ? "true" : "false"); });
    ["curves", "history", "compare"].forEach(function (v) {
      document.getElementById("view-" + v).hidden = v !== state.view; });
    document.getElementById("x").disabled = state.view !== "curves";
    document.getElementById("logx").disabled = state.view !== "curves";
    document.getElementById("y").value = state.y;
    document.getElementById("x").value = state.x;
    if (state.view === "curves") {
      renderLegend();
      renderCurves(visibleIdx);
      renderTable();
      var shownSeries = {};
      visibleIdx.forEach(function (k) { shownSeries[P.s[k]] = true; });
      document.getElementById("shown").textContent = visibleIdx.length + " points in " +
        Object.keys(shownSeries).length + " series shown";
    } else if (state.view === "history") {
      renderHistory();
    } else {
      renderCompare();
    }
    saveState();
  }

  loadState();
  summary();
  buildControls();
  render();
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now() - T0)));
  document.body.setAttribute("data-ready", "1");
})();
