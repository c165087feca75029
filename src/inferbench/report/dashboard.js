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
  var AT_AXIS = "interactivity";  // the x axis the equal-x comparison (D.at) is made on
  var PLOTLY_CONFIG = { displaylogo: false, responsive: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"] };
  var VIEWS = ["curves", "gpus", "history", "compare", "accuracy", "agentic"];
  var TURN_METRICS = [["ttft_p50", "TTFT p50 (ms)"], ["ttft_p90", "TTFT p90 (ms)"],
    ["tpot_p50", "TPOT p50 (ms)"], ["hit", "server prefix-cache hit rate"], ["prompt", "mean prompt tokens"]];
  var state = { view: "curves", y: D.axes.y[0].key, x: D.axes.x[0].key, logx: null, logy: null,
    f: {}, hide: {}, sort: null, desc: false, q: "", page: 0, hs: null, at: {}, tm: "ttft_p50" };

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
  // text broken at spaces into lines of at most `width` characters (plotly's <br>)
  function wrapWords(text, width) {
    var lines = [], line = "";
    String(text).split(" ").forEach(function (w) {
      if (line && (line + " " + w).length > width) { lines.push(line); line = w; }
      else line = line ? line + " " + w : w;
    });
    if (line) lines.push(line);
    return lines.join("<br>");
  }
  function pct(v, d) { return v === null || v === undefined ? "-" : (v * 100).toFixed(d === undefined ? 1 : d) + "%"; }
  function s(i) { return STR[i]; }
  function axisOf(table, key) { return D.axes[table].filter(function (a) { return a.key === key; })[0]; }
  function color(si) { return COLORS[si % COLORS.length]; }
  // P.fm[x key][point]: bit i set when the point is on the frontier of (x, D.axes.y[i])
  function frontBit() { return 1 << D.axes.y.map(function (a) { return a.key; }).indexOf(state.y); }
  function onFront(i, bit) { return (P.fm[state.x][i] & bit) !== 0; }
  // why a point's latency is dominated by queueing (never on a frontier), or null
  function queued(i) { var r = s(P.q[i]); return r === "-" ? null : r; }

  // ---- CSV: every chart's data as shown, from a button beside it ----
  function csvCell(v) {
    if (v === null || v === undefined) return "";
    var t = String(v);
    return /[",\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }
  function download(name, rows) {
    var text = rows.map(function (r) { return r.map(csvCell).join(","); }).join("\n") + "\n";
    var a = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/csv" })), download: name });
    document.body.appendChild(a); a.click(); a.remove();
  }
  function csvButton(name, rows) {
    var b = el("button", { "class": "csv", title: "download this chart's data as CSV" }, "CSV");
    b.addEventListener("click", function () { download(name, rows()); });
    return b;
  }
  function slug(text) { return String(text).replace(/[^A-Za-z0-9.]+/g, "-").replace(/^-|-$/g, ""); }
  function chartHead(title, name, rows) {
    var h = el("h3");
    h.appendChild(el("span", { "class": "title" }, title));
    h.appendChild(csvButton(name, rows));
    return h;
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
    if (state.tm !== "ttft_p50") q.set("tm", state.tm);
    var text = "#" + q.toString();
    try { history.replaceState(null, "", text); } catch (e) { location.hash = text; }
  }
  function loadState() {
    var q = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (VIEWS.indexOf(q.get("view")) >= 0) state.view = q.get("view");
    var y = q.get("y");
    // a cost metric from before cost models were keyed, or of a model the prices no longer
    // hold: the first model's
    if (y && !axisOf("y", y) && D.prices.models.length) {
      y = y.split(".")[0] + "." + D.prices.models[0].key;
    }
    if (y && axisOf("y", y)) state.y = y;
    if (q.get("x") && axisOf("x", q.get("x"))) state.x = q.get("x");
    if (q.has("logx")) state.logx = q.get("logx") === "1";
    if (q.has("logy")) state.logy = q.get("logy") === "1";
    q.forEach(function (v, k) { if (k.indexOf("f.") === 0) state.f[k.slice(2)] = v; });
    (q.get("hide") || "").split(",").forEach(function (k) { if (k !== "") state.hide[k] = true; });
    state.sort = q.get("sort"); state.desc = q.get("desc") === "1";
    state.q = q.get("q") || ""; state.page = parseInt(q.get("page") || "0", 10) || 0;
    if (q.has("hs")) state.hs = parseInt(q.get("hs"), 10);
    if (q.get("tm")) state.tm = q.get("tm");
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
    var invalid = document.getElementById("invalid-points");
    D.invalid.forEach(function (t) { invalid.appendChild(el("li", {}, t)); });
    document.getElementById("invalid-box").hidden = D.invalid.length === 0;
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
      var sel = document.getElementById(pair[0]), groups = {};
      D.axes[pair[1]].forEach(function (a) {
        if (!groups[a.group]) { groups[a.group] = el("optgroup", { label: a.group }); sel.appendChild(groups[a.group]); }
        groups[a.group].appendChild(el("option", { value: a.key }, a.label));
      });
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
      b.addEventListener("click", function () { state.view = b.getAttribute("data-view"); hideDetail(); render(); });
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
    var tm = document.getElementById("ag-metric");
    TURN_METRICS.forEach(function (m) { tm.appendChild(el("option", { value: m[0] }, m[1])); });
    tm.value = state.tm;
    tm.addEventListener("change", function () { state.tm = tm.value; renderAgentic(); saveState(); });
    document.querySelector("#tabs button[data-view='accuracy']").hidden = !D.evals.length;
    document.querySelector("#tabs button[data-view='agentic']").hidden = !D.agentic.length;
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
      queued(i) ? "<b>QUEUEING</b> " + queued(i) : null,
      "image " + s(P.img[i]),
      "run " + s(P.run[i]) + "   date " + s(P.date[i]) + "   commit " + s(P.commit[i]),
      "run dir " + s(P.dir[i]) + "  (click for the link)"
    ].filter(function (line) { return line !== null; }).join("<br>");
  }

  function facetTraces(idx, ya, xa, bit) {
    var bySeries = {};
    idx.forEach(function (i) { (bySeries[P.s[i]] = bySeries[P.s[i]] || []).push(i); });
    var traces = [];
    Object.keys(bySeries).map(Number).sort(function (a, b) { return a - b; }).forEach(function (si) {
      var pts = bySeries[si].filter(function (i) { return P.x[xa.key][i] !== null && P.y[ya.key][i] !== null; });
      if (!pts.length) return;
      var front = pts.filter(function (i) { return onFront(i, bit); })
        .sort(function (a, b) { return P.x[xa.key][a] - P.x[xa.key][b]; });
      var rest = pts.filter(function (i) { return !onFront(i, bit) && !queued(i); });
      var queue = pts.filter(function (i) { return queued(i) !== null; });
      [[front, "lines+markers", 1.0, "frontier"], [rest, "markers", 0.28, "dominated"],
        [queue, "markers", 0.8, "queueing"]].forEach(function (part) {
        if (!part[0].length) return;
        var q = part[3] === "queueing";
        traces.push({
          type: "scatter", mode: part[1], name: S[si].variant + (q ? " (queueing)" : ""), legendgroup: String(si),
          x: part[0].map(function (i) { return P.x[xa.key][i]; }),
          y: part[0].map(function (i) { return P.y[ya.key][i]; }),
          customdata: part[0],
          text: part[0].map(function (i) { return hoverText(i, ya, xa); }),
          hovertemplate: "%{text}<extra></extra>",
          opacity: part[2],
          line: { color: color(si), width: 2 },
          marker: { color: color(si), size: q ? 10 : 8,
            symbol: part[0].map(function (i) { return q ? "x-thin-open" : (P.off[i] ? "circle" : "circle-open"); }),
            line: { width: q ? 2 : 1.5, color: color(si) } },
          meta: { series: si, part: part[3] }
        });
      });
    });
    return traces;
  }

  // an adaptive run's skipped points: predictions, never measurements, drawn only on the
  // axes they were predicted on (total tok/s/GPU against interactivity) with their intervals
  function predictedTraces(facet, ya, xa) {
    var pts = (D.predicted || []).filter(function (p) { return p.facet === facet; });
    if (!pts.length || ya.key !== "total_tput" || xa.key !== "interactivity") return [];
    return [{
      type: "scatter", mode: "markers", name: "predicted (not measured)",
      x: pts.map(function (p) { return p.x; }), y: pts.map(function (p) { return p.y; }),
      error_x: { type: "data", symmetric: false, color: "#999", thickness: 1, width: 0,
        array: pts.map(function (p) { return p.xh - p.x; }),
        arrayminus: pts.map(function (p) { return p.x - p.xl; }) },
      error_y: { type: "data", symmetric: false, color: "#999", thickness: 1, width: 0,
        array: pts.map(function (p) { return p.yh - p.y; }),
        arrayminus: pts.map(function (p) { return p.y - p.yl; }) },
      text: pts.map(function (p) {
        return "<b>PREDICTED</b> (not measured): " + p.label + " conc " + p.c + " on " + p.hw +
          "<br>" + fmt(p.y) + " tok/s/GPU [" + fmt(p.yl) + "-" + fmt(p.yh) + "], " + fmt(p.x) +
          " tok/s/user [" + fmt(p.xl) + "-" + fmt(p.xh) + "] (" + Math.round(p.conf * 100) +
          "%)<br>" + p.why + "<br>run " + p.run;
      }),
      hovertemplate: "%{text}<extra></extra>", opacity: 0.6,
      marker: { color: "#999", size: 7, symbol: "x-thin-open", line: { width: 1.5, color: "#777" } },
      meta: { part: "predicted" }
    }];
  }

  function renderCurves(visible) {
    var ya = axisOf("y", state.y), xa = axisOf("x", state.x), bit = frontBit();
    var byFacet = {};
    visible.forEach(function (i) { var f = S[P.s[i]].facet; (byFacet[f] = byFacet[f] || []).push(i); });
    var holder = document.getElementById("facets");
    holder.querySelectorAll(".plot").forEach(function (p) { Plotly.purge(p); });
    holder.textContent = "";
    var empty = [];
    Object.keys(byFacet).sort().forEach(function (facet) {
      var traces = facetTraces(byFacet[facet], ya, xa, bit).concat(predictedTraces(facet, ya, xa));
      // a chart with nothing to draw is named in a note, never drawn as an empty frame
      if (!traces.length) { empty.push(facet); return; }
      var box = el("div", { "class": "facet", "data-facet": facet });
      var plot = el("div", { "class": "plot" });
      box.appendChild(chartHead(facet, "curves-" + slug(facet) + "-" + ya.key + "-vs-" + xa.key + ".csv",
        function () { return curveRows(plot, ya, xa); }));
      box.appendChild(plot);
      var at = el("div", { "class": "at" });
      box.appendChild(at);
      holder.appendChild(box);
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
      Plotly.newPlot(plot, traces, layout, PLOTLY_CONFIG);
      plot.on("plotly_click", function (ev) {
        if (ev.points.length && ev.points[0].customdata !== undefined) showDetail(ev.points[0].customdata);
      });
      renderAt(at, facet);
    });
    document.getElementById("hidden-facets").textContent = empty.length ?
      "no " + ya.short + " values in " + empty.join(", ") + " (not drawn)" : "";
    var note = axisOf("y", state.y).note;
    document.getElementById("axis-note").textContent = note;
    renderCostSources();
    document.getElementById("logx").checked = logX();
    document.getElementById("logy").checked = logY();
  }

  // equal-interactivity comparison of one facet, for the chosen y metric
  function renderAt(box, facet) {
    var rows = ((D.at[facet] || {})[state.y] || []);
    box.textContent = "";
    if (!rows.length) return;
    // it interpolates the frontiers at equal interactivity: shown only on that x axis, so
    // it never speaks of an axis the chart does not draw
    if (state.x !== AT_AXIS) {
      var go = el("button", { "class": "at-switch" }, "compare at equal " + axisOf("x", AT_AXIS).short);
      go.addEventListener("click", function () { state.x = AT_AXIS; state.logx = null; render(); });
      box.appendChild(go);
      return;
    }
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
      "  commit " + s(P.commit[i])].concat(queued(i) ? ["QUEUEING " + queued(i)] : [], [""]).join("\n")));
    var dir = s(P.dir[i]);
    // only a relative path or a file: URL (what the report builds); never another scheme
    if (dir !== "-" && (dir.indexOf("file:") === 0 || !/^[a-z][a-z0-9+.-]*:/i.test(dir)))
      box.appendChild(el("a", { href: dir, id: "detail-link" }, "open the run directory"));
    box.appendChild(document.createTextNode("   "));
    var close = el("button", { id: "detail-close" }, "close");
    close.addEventListener("click", hideDetail);
    box.appendChild(close);
    box.style.display = "block";
    detailOpenedAt = performance.now();
  }
  // the detail box belongs to the point clicked: a tab change, Escape or a click anywhere
  // else closes it, so it never covers another view's charts and tables
  var detailOpenedAt = 0;
  function hideDetail() { document.getElementById("detail").style.display = "none"; }
  function detailControls() {
    document.addEventListener("keydown", function (ev) { if (ev.key === "Escape") hideDetail(); });
    document.addEventListener("click", function (ev) {
      // the click that opened it: plotly reports a point's click on mouseup, before the
      // document sees the click event itself
      var opening = detailOpenedAt && performance.now() - detailOpenedAt < 400;
      detailOpenedAt = 0;
      if (opening) return;
      if (!document.getElementById("detail").contains(ev.target)) hideDetail();
    });
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
        var v = H.y[ya.key][k], reg = (H.reg[k] >> yi) & 1, unj = (H.unj[k] >> yi) & 1;
        if (reg) { regX.push(xOf(k)); regY.push(v); regText.push("regression: " + text[ks.indexOf(k)]); }
        var tr = el("tr");
        [name, s(H.run[k]), s(H.date[k]), s(H.tag[k]), s(H.img[k]), s(H.commit[k])].forEach(function (t) {
          tr.appendChild(el("td", {}, t)); });
        tr.appendChild(el("td", { "class": "num" }, fmt(v)));
        var change = prev !== null && v !== null && prev ? (v - prev) / Math.abs(prev) : null;
        tr.appendChild(el("td", { "class": "num" + (reg ? " regression" : "") }, change === null ? "" : (change >= 0 ? "+" : "") + pct(change)));
        tr.appendChild(el("td", { "class": reg ? "regression" : "" }, reg ? "regression" : (unj ? "not judged" : "")));
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

  // the CSV of one facet: every point drawn, frontier first, with what the hover shows
  function curveRows(plot, ya, xa) {
    var rows = [["series", "part", "topology", "concurrency", xa.short, ya.short, "official", "status",
      "failed", "run", "date", "commit", "image"]];
    plot.data.forEach(function (t) {
      if (!t.customdata) return;  // predicted points: not measurements
      t.customdata.forEach(function (i) {
        rows.push([S[P.s[i]].label, t.meta.part, s(P.t[i]), P.c[i], P.x[xa.key][i], P.y[ya.key][i],
          P.off[i] ? "yes" : "no", s(P.st[i]), P.fr[i], s(P.run[i]), s(P.date[i]), s(P.commit[i]), s(P.img[i])]);
      });
    });
    return rows;
  }

  // the $/GPU-hour figures behind a cost metric, each with its source
  function costModel() {
    var key = state.y.split(".")[1];
    return D.prices.models.filter(function (m) { return m.key === key; })[0] || null;
  }
  function renderCostSources() {
    var box = document.getElementById("cost-sources");
    box.textContent = "";
    var m = costModel();
    box.hidden = !m;
    if (!m) return;
    box.appendChild(el("summary", { "class": "note" }, "$/GPU-hour, " + m.label + " (" + D.prices.file + ")"));
    if (m.note) box.appendChild(el("p", { "class": "note" }, m.note));
    var t = el("table", { id: "cost-table" });
    var head = el("tr");
    ["GPU", D.prices.currency + "/GPU-hour", "source"].forEach(function (h) { head.appendChild(el("th", {}, h)); });
    t.appendChild(head);
    Object.keys(m.per_gpu_hour).forEach(function (gpu) {
      var tr = el("tr");
      tr.appendChild(el("td", {}, gpu));
      tr.appendChild(el("td", { "class": "num" }, m.per_gpu_hour[gpu].toFixed(2)));
      tr.appendChild(el("td", {}, m.sources[gpu]));
      t.appendChild(tr);
    });
    box.appendChild(t);
  }

  // ---- GPUs: each hardware's best frontier at one interactivity ----
  function renderGpus() {
    var ya = axisOf("y", state.y), holder = document.getElementById("gpu-facets");
    holder.querySelectorAll(".plot").forEach(function (p) { Plotly.purge(p); });
    holder.textContent = "";
    var facets = Object.keys(D.at).sort().filter(function (f) {
      return S.some(function (row, si) { return row.facet === f && seriesVisible(si); }); });
    var none = [];
    facets.forEach(function (facet) {
      var rows = (D.at[facet][state.y] || []);
      if (!rows.length) { none.push(facet); return; }
      var box = el("div", { "class": "facet", "data-facet": facet });
      var plot = el("div", { "class": "plot gpu-plot" });
      var shown = [];
      box.appendChild(chartHead(facet, "gpus-" + slug(facet) + "-" + ya.key + ".csv", function () {
        var out = [["interactivity (tok/s/user)", "hardware", "best series", ya.short, "x of best"]];
        shown.forEach(function (r) { out.push(r); });
        return out;
      }));
      var label = el("label", {}, "at interactivity ");
      var sel = el("select", { "class": "gpu-target" });
      rows.forEach(function (r, k) { sel.appendChild(el("option", { value: String(k) }, r.at + " tok/s/user")); });
      var pick = state.at[facet];
      if (pick === undefined || pick >= rows.length) pick = Math.floor((rows.length - 1) / 2);
      sel.value = String(pick);
      label.appendChild(sel);
      box.appendChild(label);
      box.appendChild(plot);
      holder.appendChild(box);
      function draw() {
        var r = rows[parseInt(sel.value, 10)], best = {};
        r.values.forEach(function (v) {
          if (!seriesVisible(v[0])) return;
          var hw = S[v[0]].hw, cur = best[hw];
          var better = !cur || (ya.higher ? v[1] > cur[1] : v[1] < cur[1]);
          if (better) best[hw] = v;
        });
        var hws = Object.keys(best).sort(function (a, b) {
          return ya.higher ? best[b][1] - best[a][1] : best[a][1] - best[b][1]; });
        var top = hws.length ? best[hws[0]][1] : null;
        shown = hws.map(function (hw) {
          return [r.at, hw, S[best[hw][0]].variant, best[hw][1], +(best[hw][1] / top).toFixed(3)]; });
        Plotly.react(plot, [{
          type: "bar", x: hws, y: hws.map(function (hw) { return best[hw][1]; }),
          text: hws.map(function (hw) { return fmt(best[hw][1]) + " (" + (best[hw][1] / top).toFixed(2) + "x)"; }),
          textposition: "outside", cliponaxis: false,
          customdata: hws.map(function (hw) { return S[best[hw][0]].variant; }),
          hovertemplate: "%{x}: %{y} " + ya.short + "<br>best: %{customdata}<extra></extra>",
          marker: { color: hws.map(function (hw) { return color(best[hw][0]); }) }
        }], {
          margin: { l: 70, r: 12, t: 24, b: 40 }, showlegend: false,
          yaxis: { title: { text: ya.label }, rangemode: "tozero" },
          xaxis: { title: { text: "hardware (best configuration at " + r.at + " tok/s/user)" } },
          font: { family: "system-ui, sans-serif", size: 11 }
        }, PLOTLY_CONFIG);
      }
      sel.addEventListener("change", function () { state.at[facet] = parseInt(sel.value, 10); draw(); saveState(); });
      draw();
    });
    document.getElementById("gpu-none").textContent = none.length ?
      "no interactivity reached by two frontiers for " + ya.short + " in " + none.join(", ") : "";
  }

  // ---- accuracy: eval scores per configuration, one chart per task ----
  function renderAccuracy() {
    var holder = document.getElementById("acc-charts");
    holder.querySelectorAll(".plot").forEach(function (p) { Plotly.purge(p); });
    holder.textContent = "";
    var byTask = {};
    D.evals.forEach(function (e) {
      if (state.f.hw && e.hw !== state.f.hw) return;
      (byTask[e.task] = byTask[e.task] || []).push(e);
    });
    // a phone: configuration names wrapped onto lines and a margin that fits them, never
    // a fixed 360 px margin that clips them
    var narrow = holder.clientWidth < 640;
    function name(e) { return narrow ? wrapWords(e.config, 18) : e.config; }
    Object.keys(byTask).sort().forEach(function (task) {
      var rows = byTask[task].slice().sort(function (a, b) { return (a.score || 0) - (b.score || 0); });
      var box = el("div", { "class": "facet", "data-task": task });
      var plot = el("div", { "class": "plot acc-plot" });
      plot.style.height = Math.max(220, 60 + (narrow ? 48 : 28) * rows.length) + "px";
      box.appendChild(chartHead(task + " (" + rows[0].metric + ")", "accuracy-" + slug(task) + ".csv", function () {
        var out = [["configuration", "task", "metric", "score", "stderr", "n", "status", "run"]];
        rows.forEach(function (e) { out.push([e.config, e.task, e.metric, e.score, e.stderr, e.n, e.status, e.run]); });
        return out;
      }));
      box.appendChild(plot);
      holder.appendChild(box);
      Plotly.newPlot(plot, [{
        type: "bar", orientation: "h", y: rows.map(name),
        x: rows.map(function (e) { return e.score; }),
        error_x: { type: "data", array: rows.map(function (e) { return e.stderr || 0; }), visible: true },
        text: rows.map(function (e) { return e.ok ? fmt(e.score) : e.status; }), textposition: "auto",
        marker: { color: rows.map(function (e) { return e.ok ? "#1d4ed8" : "#9ca3af"; }) },
        hovertemplate: "%{y}<br>score %{x}<extra></extra>"
      }], {
        margin: { l: narrow ? 8 : 360, r: 12, t: 8, b: 40 }, showlegend: false,
        xaxis: { title: { text: "score (± stderr)" }, range: [0, 1] },
        yaxis: { automargin: true },
        font: { family: "system-ui, sans-serif", size: 11 }
      }, PLOTLY_CONFIG);
    });
  }

  // ---- agentic: per-turn and per-session figures, cache hit rates ----
  function agName(a) { return S[a.s].variant + " " + a.t + " conc " + a.c; }
  function renderAgentic() {
    var pts = D.agentic.filter(function (a) { return seriesVisible(a.s); });
    var m = TURN_METRICS.filter(function (t) { return t[0] === state.tm; })[0] || TURN_METRICS[0];
    var turns = document.getElementById("ag-turns"), cache = document.getElementById("ag-cache");
    Plotly.purge(turns); Plotly.purge(cache);
    var font = { family: "system-ui, sans-serif", size: 11 };
    Plotly.newPlot(turns, pts.map(function (a, n) {
      return { type: "scatter", mode: "lines+markers", name: agName(a), x: a.turns.turn, y: a.turns[m[0]],
        line: { color: color(a.s) }, marker: { symbol: n % 2 ? "square" : "circle" } };
    }), { margin: { l: 70, r: 12, t: 8, b: 80 }, legend: { orientation: "h", y: -0.3 },
      xaxis: { title: { text: "turn of the root conversation" }, dtick: 1 },
      yaxis: { title: { text: m[1] }, rangemode: "tozero" }, font: font }, PLOTLY_CONFIG);
    var parts = [["client_reuse", "reusable prompt share (a perfect prefix cache)", "#9ca3af"],
      ["server_overall", "server hit rate, all tiers", "#1d4ed8"], ["server_gpu", "server hit rate, GPU", "#2ca02c"],
      ["server_external", "server hit rate, CPU / external", "#ff7f0e"]];
    Plotly.newPlot(cache, parts.map(function (p) {
      return { type: "bar", name: p[1], x: pts.map(agName), y: pts.map(function (a) { return a.cache[p[0]]; }),
        marker: { color: p[2] }, hovertemplate: "%{x}<br>" + p[1] + " %{y:.1%}<extra></extra>" };
    }), { barmode: "group", margin: { l: 70, r: 12, t: 8, b: 80 }, legend: { orientation: "h", y: -0.3 },
      yaxis: { title: { text: "share of prompt tokens" }, tickformat: ".0%", range: [0, 1] }, font: font }, PLOTLY_CONFIG);
    var body = document.getElementById("ag-rows");
    body.textContent = "";
    sessionRows(pts).slice(1).forEach(function (r) {
      var tr = el("tr");
      r.forEach(function (v, k) {
        var text = k < 2 ? String(v) : (Number.isInteger(v) ? String(v) : fmt(v));
        tr.appendChild(el("td", { "class": k > 1 ? "num" : "" }, text));
      });
      body.appendChild(tr);
    });
  }
  function sessionRows(pts) {
    var rows = [["point", "kind", "sessions/min", "started", "completed", "failed", "cut", "session s p50",
      "session s p90", "requests/session p50", "input tok/session p50", "output tok/session p50", "requests", "tok/s"]];
    pts.forEach(function (a) {
      var x = a.sessions;
      rows.push([agName(a), a.kind, x.per_min, x.started, x.completed, x.failed, x.cut, x.duration_p50,
        x.duration_p90, x.requests_p50, x.input_p50, x.output_p50, a.requests, a.tput]);
    });
    return rows;
  }
  function agenticControls() {
    function visible() { return D.agentic.filter(function (a) { return seriesVisible(a.s); }); }
    document.getElementById("ag-turns-head").appendChild(csvButton("agentic-per-turn.csv", function () {
      var out = [["point", "turn", "requests", "mean prompt tokens", "TTFT p50 ms", "TTFT p90 ms", "TPOT p50 ms", "server hit rate"]];
      visible().forEach(function (a) {
        a.turns.turn.forEach(function (t, k) {
          out.push([agName(a), t, a.turns.requests[k], a.turns.prompt[k], a.turns.ttft_p50[k], a.turns.ttft_p90[k],
            a.turns.tpot_p50[k], a.turns.hit[k]]);
        });
      });
      return out;
    }));
    document.getElementById("ag-cache-head").appendChild(csvButton("agentic-cache.csv", function () {
      var out = [["point", "engine", "reusable prompt share", "server hit rate", "server GPU hit rate", "server external hit rate"]];
      visible().forEach(function (a) {
        out.push([agName(a), a.cache.engine, a.cache.client_reuse, a.cache.server_overall, a.cache.server_gpu, a.cache.server_external]);
      });
      return out;
    }));
    document.getElementById("ag-sessions-head").appendChild(csvButton("agentic-sessions.csv", function () {
      return sessionRows(visible()); }));
    document.getElementById("h-head").appendChild(csvButton("history.csv", function () {
      var chart = document.getElementById("h-chart"), out = [["configuration", "run date or run", axisOf("y", state.y).short]];
      (chart.data || []).forEach(function (t) {
        if (t.name === "regression") return;
        t.x.forEach(function (x, k) { out.push([t.name, x, t.y[k]]); });
      });
      return out;
    }));
  }

  // ---- everything ----
  function render() {
    visibleIdx = [];
    for (var i = 0; i < N; i++) if (seriesVisible(P.s[i])) visibleIdx.push(i);
    document.querySelectorAll("#tabs button").forEach(function (b) {
      b.setAttribute("aria-selected", b.getAttribute("data-view") === state.view ? "true" : "false"); });
    VIEWS.forEach(function (v) { document.getElementById("view-" + v).hidden = v !== state.view; });
    document.getElementById("x").disabled = state.view !== "curves";
    document.getElementById("logx").disabled = state.view !== "curves";
    document.getElementById("axes").hidden = state.view === "accuracy" || state.view === "agentic";
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
    } else if (state.view === "gpus") {
      renderGpus();
    } else if (state.view === "history") {
      renderHistory();
    } else if (state.view === "accuracy") {
      renderAccuracy();
    } else if (state.view === "agentic") {
      renderAgentic();
    } else {
      renderCompare();
    }
    saveState();
  }

  loadState();
  summary();
  buildControls();
  agenticControls();
  detailControls();
  render();
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now() - T0)));
  document.body.setAttribute("data-ready", "1");
})();
