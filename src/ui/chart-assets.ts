/**
 * The overview's charts: uPlot (a small canvas chart library) served from bub's own
 * node_modules, never from a CDN, and the script that draws the page's figures with it.
 * uPlot styles its elements through the DOM, which the Content-Security-Policy allows; its
 * style sheet is served beside it.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

/** uPlot's script and style sheet, read once when first asked for. */
export interface ChartLibrary {
  script(): Promise<string>;
  styles(): Promise<string>;
}

/** Reads uPlot's files from the installed `uplot` package. */
export function chartLibrary(): ChartLibrary {
  const require = createRequire(import.meta.url);
  let script: Promise<string> | null = null;
  let styles: Promise<string> | null = null;
  return {
    script: () => (script ??= readFile(require.resolve("uplot/dist/uPlot.iife.min.js"), "utf8")),
    styles: () => (styles ??= readFile(require.resolve("uplot/dist/uPlot.min.css"), "utf8")),
  };
}

/**
 * Draws the overview: bars of tokens and cost per day (a time axis) and of the slowest turns,
 * sized to their box and redrawn when it changes width. Sets `data-drawn` on each chart.
 */
export const CHARTS_JS = `
"use strict";
(function () {
  var holder = document.getElementById("overview-data");
  if (!holder) return;
  if (typeof uPlot !== "function") {
    // The library did not load (or failed as it loaded): the tables below hold the same figures.
    document.querySelectorAll(".chart").forEach(function (box) { box.textContent = "The chart could not be drawn in this browser; the tables below have the figures."; box.classList.add("muted"); });
    return;
  }
  var days = JSON.parse(holder.dataset.days || "[]");
  var slowest = JSON.parse(holder.dataset.slowest || "[]");
  var css = getComputedStyle(document.documentElement);
  function color(name) { return css.getPropertyValue(name).trim() || "#2456c8"; }
  var ink = color("--muted"), grid = color("--line");
  var charts = [];
  function axis(format) { return { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 64, values: format ? function (u, values) { return values.map(format); } : undefined }; }
  function draw(id, x, y, label, format, fill, xAxis, xRange) {
    var box = document.getElementById(id);
    if (!box) return;
    var options = {
      width: Math.max(240, box.clientWidth), height: 220,
      // Ranges from the figures themselves (uPlot widens a single point's range by a day in ms).
      scales: { x: { time: xAxis === null, range: xRange }, y: { range: function () { var top = Math.max.apply(null, y.map(function (v) { return v || 0; })); return [0, top > 0 ? top * 1.15 : 1]; } } },
      series: [{}, { label: label, stroke: fill, fill: fill, width: 1, paths: uPlot.paths.bars({ size: [0.6, 48] }), points: { show: false }, value: function (u, v) { return v === null || v === undefined ? "—" : format(v); } }],
      axes: [xAxis || dayAxis, axis(format)],
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
    };
    charts.push({ chart: new uPlot(options, [x, y], box), box: box });
    box.dataset.drawn = String(y.filter(function (v) { return v !== null; }).length);
  }
  var day = 86400;
  // Day ticks only, written as the day (UTC), like the table below.
  var dayAxis = { stroke: ink, grid: { show: false }, ticks: { stroke: grid }, incrs: [day, 2 * day, 7 * day, 14 * day, 30 * day, 91 * day, 365 * day], values: function (u, values) { return values.map(function (v) { return new Date(v * 1000).toISOString().slice(0, 10); }); } };
  var times = days.map(function (d) { return Date.parse(d.day + "T00:00:00Z") / 1000; });
  var timeRange = function () { return [times[0] - day * 0.75, times[times.length - 1] + day * 0.75]; };
  var count = function (v) { return Math.round(v).toLocaleString("en"); };
  var usd = function (v) { return "$" + (v >= 0.1 ? v.toFixed(2) : Number(v.toPrecision(2)).toString()); };
  if (days.length > 0) {
    draw("chart-tokens", times, days.map(function (d) { return d.tokens; }), "tokens", count, color("--accent"), null, timeRange);
    var costs = days.map(function (d) { return d.usd; });
    // With no known price there is nothing to draw: the page says so instead.
    if (costs.some(function (v) { return v !== null; })) draw("chart-cost", times, costs, "cost (USD)", usd, color("--warn"), null, timeRange);
  }
  if (slowest.length > 0) {
    var ranks = slowest.map(function (t, i) { return i + 1; });
    var rankAxis = { stroke: ink, grid: { show: false }, ticks: { stroke: grid }, splits: function () { return ranks; }, values: function (u, values) { return values.map(function (v) { return "#" + v; }); } };
    draw("chart-slowest", ranks, slowest.map(function (t) { return t.seconds; }), "seconds", function (v) { return v.toFixed(1) + " s"; }, color("--err"), rankAxis, function () { return [0.4, slowest.length + 0.6]; });
  }
  if (typeof ResizeObserver === "function") {
    var observer = new ResizeObserver(function () { charts.forEach(function (c) { c.chart.setSize({ width: Math.max(240, c.box.clientWidth), height: 220 }); }); });
    charts.forEach(function (c) { observer.observe(c.box); });
  }
})();
`;
