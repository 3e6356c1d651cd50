// The Covey console: every CoAP request goes through the gateway's HTTP-CoAP proxy (/hc/),
// the Entity Manager's included, so the page needs nothing else from the server.
"use strict";

const $ = (sel) => document.querySelector(sel);
const FORMATS = [["", "none"], ["0", "text/plain"], ["40", "link-format"], ["41", "xml"],
  ["42", "octet-stream"], ["50", "json"], ["60", "cbor"], ["110", "senml+json"], ["112", "senml+cbor"]];
const MEDIA = { "0": "text/plain;charset=utf-8", "40": "application/link-format", "41": "application/xml",
  "42": "application/octet-stream", "50": "application/json", "60": "application/cbor",
  "110": "application/senml+json", "112": "application/senml+cbor" };
let em = "";
let exploreSource = null;

// One CoAP request through the proxy: {status, code, type, text, bytes}.
async function coap(method, uri, opts = {}) {
  const headers = {};
  if (opts.format) headers["Content-Type"] = MEDIA[opts.format] || opts.format;
  if (opts.accept) headers["Accept"] = MEDIA[opts.accept] || opts.accept;
  const r = await fetch("/hc/" + uri, { method, headers, body: opts.body });
  const bytes = new Uint8Array(await r.arrayBuffer());
  return {
    status: r.status, ok: r.ok, code: r.headers.get("coap-code") || String(r.status),
    type: r.headers.get("content-type") || "", bytes,
    text: new TextDecoder().decode(bytes),
  };
}

// CoRE link format (RFC 6690): [{path, attrs}], commas inside quotes kept.
function parseLinks(text) {
  const links = [];
  let cur = "", quoted = false;
  const push = () => {
    const m = cur.trim().match(/^<([^>]*)>(.*)$/);
    if (m) {
      const attrs = {};
      for (const part of m[2].split(";").slice(1)) {
        const [k, v = ""] = part.split("=");
        attrs[k.trim()] = v.trim().replace(/^"|"$/g, "");
      }
      links.push({ path: m[1], attrs });
    }
    cur = "";
  };
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    if (ch === "," && !quoted) push(); else cur += ch;
  }
  push();
  return links;
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function show(node, text) { node.textContent = text; node.hidden = false; }

// A number at a precision people read: integers whole, others to three significant
// decimals by magnitude (20.733, 0.0421, 1234.6), trailing zeros dropped.
function formatNumber(v) {
  if (typeof v !== "number" || !Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  const decimals = a >= 1000 ? 1 : a >= 1 ? 3 : Math.min(6, 2 - Math.floor(Math.log10(a)));
  return String(Number(v.toFixed(decimals)));
}

// A reply time in seconds as people read it: 0.42 ms, 3.1 ms, 120 ms, 2.22 s.
function formatMs(seconds) {
  const ms = seconds * 1000;
  if (!(ms > 0)) return "< 0.001 ms";
  if (ms >= 1000) return `${formatNumber(Number(seconds.toFixed(2)))} s`;
  const decimals = ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 0.01 ? 2 : 3;
  return `${Number(ms.toFixed(decimals))} ms`;
}

// SenML units (RFC 8428) as people write them.
const UNIT_TEXT = { Cel: "°C", K: "K", "%RH": "%RH", "/": "", "%": "%" };
const unitText = (u) => (u in UNIT_TEXT ? UNIT_TEXT[u] : u || "");
const units = new Map();

// The unit a member reports in SenML ("" when it does not), asked once per URI.
function unitOf(uri) {
  if (!uri) return Promise.resolve("");
  if (!units.has(uri)) {
    units.set(uri, coap("GET", uri, { accept: "110" }).then((r) => {
      if (!r.ok) return "";
      try {
        const pack = JSON.parse(r.text);
        const rec = pack.find((x) => x.u || x.bu);
        return rec ? unitText(rec.u || rec.bu) : "";
      } catch { return ""; }
    }).catch(() => ""));
  }
  return units.get(uri);
}

// ---- tabs
for (const b of document.querySelectorAll("nav button")) {
  b.addEventListener("click", () => showTab(b.dataset.tab));
}

function showTab(name) {
  for (const b of document.querySelectorAll("nav button")) {
    const on = b.dataset.tab === name;
    b.classList.toggle("active", on);
    if (on) b.setAttribute("aria-current", "page"); else b.removeAttribute("aria-current");
  }
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.id === "tab-" + name));
  if (name === "live" && liveChart) resizeChart();
}

// Brings a result the user just asked for into view, without jumping when it is visible.
function reveal(node) { node.scrollIntoView({ block: "nearest", behavior: "instant" }); }

// A create, save or delete result in the status line at the top of the entities panel.
function status(text, bad = false) {
  const s = $("#entity-result");
  show(s, text);
  s.classList.toggle("bad", bad);
  reveal(s);
}

// ---- entities
// Reliability over this browser's queries of an entity: members answered of members asked
// (those the query did not need are not counted), and queries that got their replies.
function reliability(name) {
  try {
    const r = JSON.parse(localStorage.getItem("covey-rel-" + name));
    return r && Number.isFinite(r.asked) ? r : null;
  } catch { return null; }
}

function recordReliability(name, doc, succeeded) {
  const r = reliability(name) || { asked: 0, answered: 0, queries: 0, succeeded: 0 };
  const notNeeded = (doc.not_needed || []).length;
  r.asked += doc.members - notNeeded;
  r.answered += doc.answered;
  r.queries += 1;
  r.succeeded += succeeded ? 1 : 0;
  localStorage.setItem("covey-rel-" + name, JSON.stringify(r));
  showReliability(name);
}

const percent = (part, whole) => (whole ? `${Math.round(100 * part / whole)} %` : "–");

function showReliability(name) {
  const row = document.querySelector(`#entity-table tr[data-entity="${CSS.escape(name)}"]`);
  if (!row) return;
  const rel = reliability(name);
  const [member, group] = [row.querySelector(".member-rel"), row.querySelector(".group-rel")];
  member.textContent = rel ? percent(rel.answered, rel.asked) : "–";
  member.title = rel ? `${rel.answered} answers of ${rel.asked} members asked` : "no query yet";
  group.textContent = rel ? percent(rel.succeeded, rel.queries) : "–";
  group.title = rel ? `${rel.succeeded} of ${rel.queries} queries got the replies they waited for` : "no query yet";
}

async function loadEntities() {
  const r = await coap("GET", em + "/e");
  const tbody = $("#entity-table tbody");
  tbody.replaceChildren();
  const names = parseLinks(r.ok ? r.text : "").map((l) => ({ name: l.path.replace(/^\/e\//, ""), ect: l.attrs.ect || "unicast" }))
    .filter((l) => l.name && !l.name.includes("/"));
  $("#entities-empty").hidden = names.length > 0;
  const select = $("#query-entity");
  const chosen = select.value;
  select.replaceChildren(...names.map((n) => el("option", n.name)));
  if (names.some((n) => n.name === chosen)) select.value = chosen;
  for (const { name, ect } of names) {
    const tr = el("tr");
    tr.dataset.entity = name;
    const members = el("td", "…", "num");
    tr.append(el("td", name, "entity-name"), el("td", ect), members, el("td", "–", "num member-rel"), el("td", "–", "num group-rel"));
    const actions = el("td", undefined, "actions");
    const buttons = [["Profile", () => openProfile(name)], ["Query", () => queryFromRow(name)],
      ["Delete", () => deleteEntity(name)]];
    for (const [label, fn] of buttons) {
      const b = el("button", label);
      b.type = "button";
      b.className = "plain " + label.toLowerCase();
      b.setAttribute("aria-label", `${label} ${name}`);
      b.addEventListener("click", fn);
      actions.append(b);
    }
    tr.append(actions);
    tbody.append(tr);
    showReliability(name);
    coap("GET", `${em}/e/${name}/profile`, { accept: "50" }).then((p) => {
      try { members.textContent = JSON.parse(p.text).er.length; } catch { members.textContent = "?"; }
    });
  }
  markSelected();
}

function markSelected() {
  const name = $("#query-entity").value;
  for (const tr of document.querySelectorAll("#entity-table tbody tr")) tr.classList.toggle("selected", tr.dataset.entity === name);
  $("#query-title-entity").textContent = name ? `· ${name}` : "";
}

// A refusal as the EM reports it to a JSON client: {error, field, reason}; a text
// diagnostic (from another server, or a proxy failure) is the error of no field.
function refusal(r) {
  if (r.type.split(";")[0].trim() === "application/json") {
    try {
      const d = JSON.parse(r.text);
      if (d && typeof d.error === "string") return { error: d.error, field: d.field || null, reason: d.reason || null };
    } catch { /* not a report */ }
  }
  return { error: r.text, field: null, reason: null };
}

// The refusal as one line: "4.00: <error>".
function refusalText(r) { return `${r.code}: ${refusal(r).error}`; }

// The create form's error line for a profile field: its own, or the form's.
function errorLineOf(field) {
  return (field && document.getElementById("err-" + field)) || $("#err-form");
}

function profileFromForm(form) {
  const f = new FormData(form);
  const doc = { name: f.get("name").trim(), er: f.get("er").split(/\s+/).filter(Boolean) };
  if (f.get("ect") !== "unicast") doc.ect = f.get("ect");
  if (f.get("emt")) doc.emt = f.get("emt");
  if (f.get("enr")) doc.enr = Number(f.get("enr"));
  const eo = f.get("eo").split(/[\s,]+/).filter(Boolean);
  if (eo.length) doc.eo = eo;
  const delay = f.get("delay").trim();
  if (delay) doc.delay = delay === "auto" ? "auto" : (/^\d+$/.test(delay) ? Number(delay) : delay);
  return doc;
}

// The EM's rule for names (covey-group's check_name), said the way the EM says it.
const NAME_RULE = "use letters, digits, '-', '_' and '.' (not first), at most 63";

// Marks the create form's fields the browser finds invalid; true when there are none.
function checkCreateForm(form) {
  let ok = true;
  for (const input of form.querySelectorAll("input, textarea, select")) {
    if (input.validity.valid) continue;
    ok = false;
    input.setAttribute("aria-invalid", "true");
    const line = errorLineOf(input.name);
    if (input.name === "name" && input.validity.patternMismatch) {
      line.textContent = `"${input.value}" is not a name: ${NAME_RULE}`;
    } else {
      line.textContent = input.validationMessage;
    }
  }
  return ok;
}

function clearCreateErrors() {
  document.querySelectorAll("#create-form .error").forEach((e) => (e.textContent = ""));
  document.querySelectorAll("#create-form [aria-invalid]").forEach((e) => e.removeAttribute("aria-invalid"));
}

$("#create-form [name=name]").addEventListener("input", (ev) => {
  const input = ev.target;
  const bad = input.validity.patternMismatch;
  $("#err-name").textContent = bad ? `"${input.value}" is not a name: ${NAME_RULE}` : "";
  if (bad) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
});

$("#create-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearCreateErrors();
  const form = ev.target;
  if (!checkCreateForm(form)) { form.querySelector("[aria-invalid=true]").focus(); return; }
  const button = $("#create");
  button.disabled = true;
  button.textContent = "Creating… (checking every member)";
  try {
    const r = await coap("POST", em + "/e", { format: "50", body: JSON.stringify(profileFromForm(form)) });
    if (r.ok) {
      form.reset();
      await loadEntities();
      status(`${r.code}: ${r.text}`);
    } else {
      const why = refusal(r);
      errorLineOf(why.field).textContent = `${r.code}: ${why.error}`;
      const input = why.field && form.elements.namedItem(why.field);
      if (input) input.setAttribute("aria-invalid", "true");
    }
  } finally {
    button.disabled = false;
    button.textContent = "Create";
  }
});

async function openProfile(name) {
  const r = await coap("GET", `${em}/e/${name}/profile`, { accept: "50" });
  $("#profile-name").textContent = `· ${name}`;
  $("#profile-name").dataset.entity = name;
  let text = r.text;
  try { text = JSON.stringify(JSON.parse(r.text), null, 2); } catch { /* shown as sent */ }
  $("#profile-text").value = text;
  $("#profile-error").textContent = r.ok ? "" : refusalText(r);
  $("#profile-hint").hidden = true;
  $("#profile-editor").hidden = false;
  reveal($("#profile-panel"));
}

function closeProfile() {
  $("#profile-editor").hidden = true;
  $("#profile-hint").hidden = false;
  $("#profile-name").textContent = "";
  delete $("#profile-name").dataset.entity;
}

$("#profile-save").addEventListener("click", async () => {
  const name = $("#profile-name").dataset.entity;
  const r = await coap("PUT", `${em}/e/${name}/profile`, { format: "50", body: $("#profile-text").value });
  $("#profile-error").textContent = r.ok ? "" : refusalText(r);
  if (r.ok) { await loadEntities(); status(`profile of ${name} saved (${r.code})`); }
});
$("#profile-close").addEventListener("click", closeProfile);

async function deleteEntity(name) {
  if (!confirm(`Delete entity ${name}?`)) return;
  const r = await coap("DELETE", `${em}/e/${name}`);
  localStorage.removeItem("covey-rel-" + name);
  if ($("#profile-name").dataset.entity === name) closeProfile();
  await loadEntities();
  if ($("#query-entity").value !== queryShown) clearQuery();
  status(`${r.code} ${r.text}`, !r.ok);
}

// ---- query
let queryShown = null;

function queryString(f, extra = {}) {
  const q = new URLSearchParams();
  for (const k of ["eo", "enr", "emt", "delay"]) if (f.get(k)) q.set(k, f.get(k));
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  const s = q.toString().replace(/=(?=&|$)/g, "");
  return s ? "?" + s : "";
}

// Removes the last query's answer, so nothing on screen belongs to another query.
function clearQuery() {
  queryShown = null;
  $("#query-error").textContent = "";
  $("#query-result").hidden = true;
  $("#member-table tbody").replaceChildren();
  $("#fanout-result").hidden = true;
  $("#fanout-table tbody").replaceChildren();
}

function queryFromRow(name) {
  $("#query-entity").value = name;
  markSelected();
  runQuery({});
}

function memberRow(cells) {
  const tr = el("tr");
  for (const [text, cls] of cells) tr.append(el("td", text, cls));
  return tr;
}

async function runQuery(extra) {
  clearQuery();
  const f = new FormData($("#query-form"));
  const name = f.get("entity");
  if (!name) { $("#query-error").textContent = "no entity to query: create one first"; return; }
  const buttons = [$("#query-run"), $("#query-anycast")];
  buttons.forEach((b) => (b.disabled = true));
  let r;
  try {
    r = await coap("GET", `${em}/e/${name}${queryString(f, extra)}`, { accept: "50" });
  } finally {
    buttons.forEach((b) => (b.disabled = false));
  }
  let doc = null;
  try { doc = JSON.parse(r.text); } catch { /* a diagnostic, not a combined reply */ }
  if (!doc || typeof doc.answered !== "number") {
    $("#query-error").textContent = refusalText(r);
    reveal($("#query-error"));
    return;
  }
  if (!r.ok) $("#query-error").textContent = `${r.code}: fewer members answered than the query waited for`;
  recordReliability(name, doc, r.ok);
  const unit = await unitOf((doc.replies.find((x) => x.code.startsWith("2.")) || {}).member || "");
  if ($("#query-entity").value !== name) return;
  queryShown = name;
  $("#query-op").textContent = doc.op;
  const scalar = doc.value !== null && doc.value !== undefined;
  $("#query-what").textContent = scalar ? "Combined value" : "Every member's value, below";
  $("#query-combined").hidden = !scalar;
  $("#query-value").textContent = scalar ? formatNumber(doc.value) : "";
  $("#query-unit").textContent = scalar && doc.op !== "count" ? unit : "";
  const notNeeded = new Set(doc.not_needed || []);
  const asked = doc.members - notNeeded.size;
  $("#query-answered").textContent = `${doc.answered} of ${doc.members} members answered` +
    (notNeeded.size ? ` (${asked} asked; ${notNeeded.size} not needed)` : "");
  const tbody = $("#member-table tbody");
  for (const rep of doc.replies) {
    const value = rep.values ? rep.values.map((v) => `${v.name}=${formatNumber(v.value)}`).join(" ")
      : (rep.value === null || rep.value === undefined ? "" : formatNumber(rep.value));
    tbody.append(memberRow([[rep.member, "uri"], [rep.code], [value, "num"], [formatMs(rep.t), "num"]]));
  }
  const replied = new Set(doc.replies.map((x) => x.member));
  for (const m of doc.missing.filter((x) => !replied.has(x))) {
    const tr = notNeeded.has(m)
      ? memberRow([[m, "uri"], ["not needed", "not-needed"], ["", "num"], ["", "num"]])
      : memberRow([[m, "uri"], ["missing", "missing"], ["", "num"], ["", "num"]]);
    if (notNeeded.has(m)) tr.title = "the query had its replies before this member's answer was needed";
    tbody.append(tr);
  }
  $("#member-table thead th:nth-child(3)").textContent = unit ? `value (${unit})` : "value";
  $("#query-result").hidden = false;
  reveal($("#query-result"));
}

$("#query-form").addEventListener("submit", (ev) => { ev.preventDefault(); runQuery({}); });
$("#query-anycast").addEventListener("click", () => runQuery({ enr: "1" }));
$("#query-entity").addEventListener("change", () => { clearQuery(); markSelected(); });

$("#fanout-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const name = $("#query-entity").value;
  const f = new FormData(ev.target);
  const method = f.get("method");
  if (!name || !confirm(`${method} to every member of ${name}?`)) return;
  $("#fanout-result").hidden = true;
  const r = await coap(method, `${em}/e/${name}?fanout`, { format: method === "DELETE" ? "" : "0", accept: "50", body: method === "DELETE" ? undefined : f.get("payload") });
  const tbody = $("#fanout-table tbody");
  tbody.replaceChildren();
  let doc = null;
  try { doc = JSON.parse(r.text); } catch { /* a diagnostic */ }
  if (doc && Array.isArray(doc.replies)) {
    $("#fanout-summary").textContent = `${r.code}: ${method} to ${name}, ${doc.answered} of ${doc.members} members answered`;
    for (const rep of doc.replies) tbody.append(memberRow([[rep.member, "uri"], [rep.code], [formatMs(rep.t), "num"]]));
    const replied = new Set(doc.replies.map((x) => x.member));
    for (const m of doc.missing.filter((x) => !replied.has(x))) tbody.append(memberRow([[m, "uri"], ["missing", "missing"], ["", "num"]]));
    $("#fanout-raw").textContent = JSON.stringify(doc, null, 2);
  } else {
    $("#fanout-summary").textContent = refusalText(r);
    $("#fanout-raw").textContent = r.text;
  }
  $("#fanout-table").hidden = !tbody.children.length;
  $("#fanout-result").hidden = false;
  reveal($("#fanout-result"));
});

// ---- live
// One colour per member, the same in the chart, its legend and the member list.
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
const MAX_POINTS = 500;
let liveChart = null;
let liveData = [[]];
let liveSources = [];
let liveUnit = "";

const colourOf = (i) => COLOURS[i % COLOURS.length];

function timeLabel(seconds) {
  const d = new Date(seconds * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

function chartWidth() { return Math.max(300, $("#live-chart").clientWidth || 900); }

function resizeChart() { liveChart.setSize({ width: chartWidth(), height: 320 }); }

function newChart(uris) {
  if (liveChart) liveChart.destroy();
  liveData = [[], ...uris.map(() => [])];
  const withUnit = (v) => (v === null || v === undefined ? "–" : `${formatNumber(v)}${liveUnit ? " " + liveUnit : ""}`);
  liveChart = new uPlot({
    width: chartWidth(),
    height: 320,
    // At least the last 30 s on x, so ticks fall on whole seconds from the first value on.
    scales: { x: { time: true, range: (u, min, max) => {
      const end = max ?? Date.now() / 1000;
      return [Math.min(min ?? end, end - 30), end + 1];
    } } },
    legend: { live: true },
    series: [
      { label: "time", value: (u, t) => (t === null ? "–" : timeLabel(t)) },
      ...uris.map((uri, i) => ({
        label: uri, stroke: colourOf(i), width: 2, spanGaps: true,
        points: { show: true, size: 5, fill: colourOf(i) }, value: (u, v) => withUnit(v),
      })),
    ],
    axes: [
      { label: "time", incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600], values: (u, splits) => splits.map(timeLabel) },
      { label: liveUnit ? `value (${liveUnit})` : "value", size: 70,
        values: (u, splits) => splits.map((v) => `${formatNumber(v)}${liveUnit ? " " + liveUnit : ""}`) },
    ],
  }, liveData, $("#live-chart"));
}

function addPoint(i, v) {
  liveData[0].push(Date.now() / 1000);
  liveData.forEach((s, j) => { if (j > 0) s.push(j === i + 1 ? v : null); });
  if (liveData[0].length > MAX_POINTS) liveData.forEach((s) => s.shift());
  liveChart.setData(liveData);
}

function stopLive() {
  liveSources.forEach((s) => s.close());
  liveSources = [];
  $("#live-status").textContent = liveChart ? "stopped" : "";
}

$("#live-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  stopLive();
  const target = $("#live-target").value.trim();
  let uris = [target];
  if (!target.includes("://")) {
    const p = await coap("GET", `${em}/e/${target}/profile`, { accept: "50" });
    uris = p.ok ? JSON.parse(p.text).er : [];
    if (!p.ok) { $("#live-status").textContent = `no entity ${target}: ${refusalText(p)}`; return; }
  }
  liveUnit = (await Promise.all(uris.map(unitOf))).find(Boolean) || "";
  newChart(uris);
  const legend = $("#live-legend");
  const lines = uris.map((uri, i) => {
    const li = el("li");
    const swatch = el("span", undefined, "swatch");
    swatch.style.background = colourOf(i);
    swatch.setAttribute("aria-hidden", "true");
    const text = el("span", uri);
    li.append(swatch, text);
    return text;
  });
  legend.replaceChildren(...lines.map((t) => t.parentNode));
  $("#live-status").textContent = `observing ${uris.length} member${uris.length === 1 ? "" : "s"}`;
  uris.forEach((uri, i) => {
    const src = new EventSource("/hc/" + uri);
    src.addEventListener("2.05", (e) => {
      const v = parseFloat(e.data);
      if (!Number.isNaN(v)) addPoint(i, v);
      lines[i].textContent = `${uri}: ${Number.isNaN(v) ? e.data : formatNumber(v)}${!Number.isNaN(v) && liveUnit ? " " + liveUnit : ""}`;
    });
    src.addEventListener("error", (e) => { if (e.data) lines[i].textContent = `${uri}: ${e.data}`; });
    liveSources.push(src);
  });
});
$("#live-stop").addEventListener("click", stopLive);
window.addEventListener("resize", () => { if (liveChart && $("#tab-live").classList.contains("active")) resizeChart(); });

// ---- explore
for (const sel of ["#request-format", "#request-accept"]) {
  $(sel).replaceChildren(...FORMATS.map(([v, n]) => { const o = el("option", n); o.value = v; return o; }));
}

$("#discover-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const host = $("#explore-host").value.trim().replace(/\/+$/, "");
  const r = await coap("GET", host + "/.well-known/core");
  const list = $("#resource-list");
  list.replaceChildren();
  if (!r.ok) { await showResponse(r); return; }
  for (const link of parseLinks(r.text)) {
    const b = el("button", link.path);
    b.type = "button";
    b.title = Object.entries(link.attrs).map(([k, v]) => `${k}=${v}`).join(" ");
    b.addEventListener("click", () => { $("#request-uri").value = host + link.path; });
    const li = el("li");
    li.append(b);
    list.append(li);
  }
});

async function showResponse(r) {
  $("#response-code").textContent = r.code + (r.ok ? "" : ` (HTTP ${r.status})`);
  $("#response-type").textContent = r.type;
  let body = r.text;
  const cf = Object.keys(MEDIA).find((k) => r.type.split(";")[0] === MEDIA[k].split(";")[0]);
  if (r.bytes.length && cf !== undefined && cf !== "0" && cf !== "40") {
    const rendered = await fetch(`/api/render?cf=${cf}`, { method: "POST", body: r.bytes });
    if (rendered.ok) body = (await rendered.json()).text;
  }
  $("#response-body").textContent = body;
  $("#response").hidden = false;
}

$("#request-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const withBody = ["PUT", "POST", "FETCH"].includes(f.get("method"));
  const r = await coap(f.get("method"), f.get("uri"), {
    format: withBody ? f.get("format") : "", accept: f.get("accept"), body: withBody ? f.get("payload") : undefined,
  });
  await showResponse(r);
});

$("#request-observe").addEventListener("click", () => {
  if (exploreSource) exploreSource.close();
  exploreSource = new EventSource("/hc/" + $("#request-uri").value);
  let n = 0;
  exploreSource.addEventListener("message", () => {});
  const onEvent = (e) => {
    n += 1;
    $("#response-code").textContent = `${e.type} (notification ${n}, Observe ${e.lastEventId})`;
    $("#response-type").textContent = "";
    $("#response-body").textContent = e.data;
    $("#response").hidden = false;
  };
  for (const code of ["2.05", "2.03", "4.04", "4.00", "5.00", "5.03"]) exploreSource.addEventListener(code, onEvent);
});
$("#request-stop").addEventListener("click", () => { if (exploreSource) exploreSource.close(); exploreSource = null; });

// ---- start
(async () => {
  const info = await (await fetch("/api/info")).json();
  em = info.em;
  $("#em-uri").textContent = "Entity Manager " + em;
  $("#explore-host").value = em;
  await loadEntities();
})();
