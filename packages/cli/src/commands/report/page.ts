/**
 * The report page: HTML, CSS, the inlined ECharts library and the small script that draws the
 * charts and sorts the table. Works from `file://` with no network.
 *
 * @since 0.2.0
 */
import { type ChartSpec, PALETTE } from "./model.js"
import { esc } from "./table.js"

/**
 * JSON safe to put inside a `<script>` element (no `</script>`, no HTML comment openers).
 *
 * @example
 * ```ts
 * import { scriptJson } from "./page.js"
 * scriptJson({ a: "</script>" }) // => '{"a":"\\u003c/script>"}'
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const scriptJson = (x: unknown): string =>
  JSON.stringify(x)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029")

// Runs in the browser. Plain ES2017, no imports: `echarts` is the inlined global.
const CLIENT = `
(function () {
  var specs = JSON.parse(document.getElementById("chart-data").textContent);
  var fmt = function (v) {
    if (typeof v !== "number") return v;
    if (v === 0) return "0";
    var a = Math.abs(v);
    return a >= 1000 ? Math.round(v).toLocaleString("en") : a >= 1 ? String(+v.toPrecision(4)) : String(+v.toPrecision(3));
  };
  var secondsTick = function (v) {
    return v < 1 ? +(v * 1000).toPrecision(3) + " ms" : +v.toPrecision(3) + " s";
  };
  var PALETTE = ${JSON.stringify(PALETTE)};
  var charts = [];
  var prepare = function (spec, o) {
    o.animation = false;
    o.color = o.color || PALETTE;
    // log time axes: ticks in the units a reader uses (10 ms, 200 ms, 2 s), never 0.01235
    [].concat(o.xAxis || [], o.yAxis || []).forEach(function (a) {
      if (a.type === "log" && a.name && a.name.indexOf("seconds") === 0)
        a.axisLabel = Object.assign({}, a.axisLabel, { formatter: secondsTick });
    });
    if (o.tooltip) {
      o.tooltip.confine = true;
      o.tooltip.valueFormatter = fmt;
      if (spec.id.indexOf("load-") === 0) {
        var xs = o.xAxis.data, ys = o.yAxis.data;
        o.tooltip.formatter = function (p) {
          return ys[p.value[1]] + " at " + xs[p.value[0]] + " s: <b>" + p.value[2] + "</b> requests";
        };
      } else if (spec.id.indexOf("grid-") === 0) {
        var gx = o.xAxis.data, gy = o.yAxis.data;
        o.tooltip.formatter = function (p) {
          return gy[p.value[1]] + " at " + gx[p.value[0]] + ": <b>" + fmt(p.value[3]) + "</b>" +
            (p.value[2] === "-" ? "" : " (" + fmt(p.value[2]) + "x the best)");
        };
      }
    }
    return o;
  };
  specs.forEach(function (spec) {
    var el = document.getElementById(spec.id);
    var chart = echarts.init(el, null, { renderer: "canvas" });
    chart.setOption(prepare(spec, spec.option));
    charts.push(chart);
    var button = document.getElementById(spec.id + "-alt");
    if (button && spec.alt) {
      var showingAlt = false;
      button.addEventListener("click", function () {
        showingAlt = !showingAlt;
        chart.setOption(prepare(spec, showingAlt ? spec.alt.option : spec.option), true);
        button.textContent = showingAlt ? spec.alt.back : spec.alt.label;
        button.setAttribute("aria-pressed", String(showingAlt));
      });
    }
  });
  window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  window.__charts = charts;

  var table = document.getElementById("summary");
  if (!table) return;
  var dir = {};
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    var sort = function () {
      var col = +th.getAttribute("data-col");
      var asc = dir[col] = !dir[col];
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      var key = function (tr) {
        var v = tr.cells[col].getAttribute("data-sort");
        if (v === null) return null;
        var n = Number(v);
        return isNaN(n) ? v : n;
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
        var c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return asc ? c : -c;
      });
      rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
  });
})();
`

const CSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:16px 24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 4px}
.context{color:#555;margin:0 0 12px;font-size:13px}
nav{font-size:13px;margin:0 0 12px}nav a{margin-right:12px}
.table-wrap{overflow-x:auto;max-width:100%;border:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}
th,td{padding:4px 6px;border-bottom:1px solid #eee}td{white-space:nowrap}th.n{text-align:right}th{min-width:3.5em;max-width:6.5em;vertical-align:bottom}td.n{text-align:right;font-variant-numeric:tabular-nums}
th{position:sticky;top:0;background:#f4f6f8;cursor:pointer;user-select:none;text-align:left}
th:hover{background:#e6ebf0}th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
tbody tr:hover{background:#f9fbfd}
section{margin:20px 0;padding-top:8px;border-top:1px solid #eee}
.how{color:#555;font-size:13px;margin:0 0 6px;max-width:1100px}
.note{color:#7a4a00;background:#fff6e0;border-left:3px solid #E69F00;font-size:13px;margin:0 0 6px;padding:4px 8px;max-width:1100px}
.chart{width:100%;min-width:320px}
button.alt{font-size:12px;margin:0 0 4px;padding:2px 8px;cursor:pointer}
details{margin:12px 0;font-size:12px}pre{overflow-x:auto}
footer{color:#888;font-size:12px;margin-top:24px}
`

const section = (c: ChartSpec): string =>
  `<section id="s-${esc(c.id)}"><h2>${esc(c.title)}</h2><p class="how"><b>How to read this:</b> ${esc(c.how)}</p>
${c.note ? `<p class="note"><b>Caution:</b> ${esc(c.note)}</p>` : ""}
${c.alt ? `<button type="button" class="alt" id="${esc(c.id)}-alt" aria-pressed="false">${esc(c.alt.label)}</button>` : ""}
<div class="chart" id="${esc(c.id)}" style="height:${c.height}px"></div></section>`

/**
 * Put the page together: title, context lines, the summary table, one section per chart group,
 * the terminal table (folded), the inlined chart library and the page script.
 *
 * @example
 * ```ts
 * import { page } from "./page.js"
 * const html = page({ title: "demo <1>", context: ["8 requests"], table: "<table></table>", groups: [], library: "", libraryName: "none" })
 * html.startsWith("<!doctype html>") // => true
 * html.includes("<title>demo &lt;1&gt;</title>") // => true
 * ```
 *
 * @category report
 * @since 0.2.0
 */
export const page = (o: {
  readonly title: string
  readonly context: ReadonlyArray<string>
  readonly table: string
  readonly groups: ReadonlyArray<{ readonly heading: string; readonly charts: ReadonlyArray<ChartSpec> }>
  readonly tableText?: string | undefined
  readonly library: string
  readonly libraryName: string
}): string => {
  const charts = o.groups.flatMap((g) => g.charts)
  const groups = o.groups.filter((g) => g.charts.length > 0)
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(o.title)}</title><style>${CSS}</style></head>
<body><h1>${esc(o.title)}</h1>
${o.context.map((l) => `<p class="context">${esc(l)}</p>`).join("\n")}
<nav>${groups.map((g, i) => `<a href="#g-${i}">${esc(g.heading)}</a>`).join("")}</nav>
<h2>Summary per policy</h2><p class="how"><b>How to read this:</b> one row per policy; click a column header to sort by it (again to reverse). Hover a header for what it measures.</p>
<div class="table-wrap">${o.table}</div>
${groups.map((g, i) => `<div id="g-${i}"><h2 style="margin-top:28px;font-size:18px">${esc(g.heading)}</h2>\n${g.charts.map(section).join("\n")}</div>`).join("\n")}
${o.tableText ? `<details><summary>Terminal table</summary><pre>${esc(o.tableText)}</pre></details>` : ""}
<footer>Generated by loadledger. Charts: ${esc(o.libraryName)} (inlined; this file needs no network).</footer>
<script>${o.library.replace(/<\/script/gi, "<\\/script")}</script>
<script type="application/json" id="chart-data">${scriptJson(charts)}</script>
<script>${CLIENT}</script>
</body></html>
`
}
