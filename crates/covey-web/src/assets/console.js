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
let liveSources = [];
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

// ---- tabs
for (const b of document.querySelectorAll("nav button")) {
  b.addEventListener("click", () => {
    document.querySelectorAll("nav button, .tab").forEach((x) => x.classList.remove("active"));
    b.classList.add("active");
    $("#tab-" + b.dataset.tab).classList.add("active");
  });
}

// ---- entities
function reliability(name) {
  try { return JSON.parse(localStorage.getItem("covey-rel-" + name)) || null; } catch { return null; }
}

async function loadEntities() {
  const r = await coap("GET", em + "/e");
  const tbody = $("#entity-table tbody");
  tbody.replaceChildren();
  const names = parseLinks(r.ok ? r.text : "").map((l) => ({ name: l.path.replace(/^\/e\//, ""), ect: l.attrs.ect || "unicast" }))
    .filter((l) => l.name && !l.name.includes("/"));
  $("#entities-empty").hidden = names.length > 0;
  const select = $("#query-entity");
  select.replaceChildren(...names.map((n) => el("option", n.name)));
  for (const { name, ect } of names) {
    const tr = el("tr");
    tr.dataset.entity = name;
    const rel = reliability(name);
    const members = el("td", "…");
    tr.append(el("td", name), el("td", ect), members,
      el("td", rel ? `${rel.answered}/${rel.members} (${Math.round(100 * rel.answered / rel.members)} %)` : "–"),
      el("td", rel ? (rel.answered === rel.members ? "100 %" : "0 %") : "–"));
    const actions = el("td");
    const buttons = [["Profile", () => openProfile(name)], ["Query", () => { select.value = name; document.querySelector('nav [data-tab="query"]').click(); }],
      ["Delete", () => deleteEntity(name)]];
    for (const [label, fn] of buttons) {
      const b = el("button", label);
      b.type = "button";
      b.className = "plain " + label.toLowerCase();
      b.addEventListener("click", fn);
      actions.append(b);
    }
    tr.append(actions);
    tbody.append(tr);
    coap("GET", `${em}/e/${name}/profile`, { accept: "50" }).then((p) => {
      try { members.textContent = JSON.parse(p.text).er.length; } catch { members.textContent = "?"; }
    });
  }
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

$("#create-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  document.querySelectorAll("#create-form .error").forEach((e) => (e.textContent = ""));
  document.querySelectorAll("#create-form [aria-invalid]").forEach((e) => e.removeAttribute("aria-invalid"));
  const form = ev.target;
  const button = $("#create");
  button.disabled = true;
  button.textContent = "Creating… (checking every member)";
  try {
    const r = await coap("POST", em + "/e", { format: "50", body: JSON.stringify(profileFromForm(form)) });
    if (r.ok) {
      show($("#entity-result"), r.text);
      form.reset();
      await loadEntities();
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
  $("#profile-name").textContent = name;
  let text = r.text;
  try { text = JSON.stringify(JSON.parse(r.text), null, 2); } catch { /* shown as sent */ }
  $("#profile-text").value = text;
  $("#profile-error").textContent = r.ok ? "" : refusalText(r);
  $("#profile-panel").hidden = false;
}

$("#profile-save").addEventListener("click", async () => {
  const name = $("#profile-name").textContent;
  const r = await coap("PUT", `${em}/e/${name}/profile`, { format: "50", body: $("#profile-text").value });
  $("#profile-error").textContent = r.ok ? "" : refusalText(r);
  if (r.ok) { show($("#entity-result"), `profile of ${name} saved (${r.code})`); await loadEntities(); }
});
$("#profile-close").addEventListener("click", () => ($("#profile-panel").hidden = true));

async function deleteEntity(name) {
  if (!confirm(`Delete entity ${name}?`)) return;
  const r = await coap("DELETE", `${em}/e/${name}`);
  show($("#entity-result"), `${r.code} ${r.text}`);
  localStorage.removeItem("covey-rel-" + name);
  await loadEntities();
}

// ---- query
function queryString(f, extra = {}) {
  const q = new URLSearchParams();
  for (const k of ["eo", "enr", "emt", "delay"]) if (f.get(k)) q.set(k, f.get(k));
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  const s = q.toString().replace(/=(?=&|$)/g, "");
  return s ? "?" + s : "";
}

async function runQuery(extra) {
  const f = new FormData($("#query-form"));
  const name = f.get("entity");
  $("#query-error").textContent = "";
  if (!name) { $("#query-error").textContent = "no entity to query: create one first"; return; }
  const r = await coap("GET", `${em}/e/${name}${queryString(f, extra)}`, { accept: "50" });
  if (!r.ok) { $("#query-error").textContent = refusalText(r); $("#query-result").hidden = true; return; }
  const doc = JSON.parse(r.text);
  $("#query-op").textContent = doc.op;
  $("#query-value").textContent = doc.value === null || doc.value === undefined ? "(list)" : doc.value;
  $("#query-answered").textContent = `${doc.answered} of ${doc.members} members answered`;
  localStorage.setItem("covey-rel-" + name, JSON.stringify({ answered: doc.answered, members: doc.members }));
  const tbody = $("#member-table tbody");
  tbody.replaceChildren();
  for (const rep of doc.replies) {
    const value = rep.values ? rep.values.map((v) => `${v.name}=${v.value}`).join(" ") : rep.value;
    const tr = el("tr");
    tr.append(el("td", rep.member), el("td", rep.code), el("td", value === null ? "" : String(value)), el("td", String(rep.t)));
    tbody.append(tr);
  }
  for (const m of doc.missing) {
    const tr = el("tr");
    tr.append(el("td", m), el("td", "missing", "missing"), el("td", ""), el("td", ""));
    tbody.append(tr);
  }
  $("#query-result").hidden = false;
}

$("#query-form").addEventListener("submit", (ev) => { ev.preventDefault(); runQuery({}); });
$("#query-anycast").addEventListener("click", () => runQuery({ enr: "1" }));

$("#fanout-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const name = $("#query-entity").value;
  const f = new FormData(ev.target);
  const method = f.get("method");
  if (!name || !confirm(`${method} to every member of ${name}?`)) return;
  const r = await coap(method, `${em}/e/${name}?fanout`, { format: method === "DELETE" ? "" : "0", accept: "50", body: method === "DELETE" ? undefined : f.get("payload") });
  show($("#fanout-result"), `${r.code} ${r.text}`);
});

// ---- live
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
let series = [];

function plot() {
  const c = $("#live-plot"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  const points = series.flatMap((s) => s.points);
  if (!points.length) return;
  const t0 = Math.min(...points.map((p) => p.t)), t1 = Math.max(...points.map((p) => p.t), t0 + 1);
  let v0 = Math.min(...points.map((p) => p.v)), v1 = Math.max(...points.map((p) => p.v));
  if (v1 - v0 < 1e-9) { v0 -= 1; v1 += 1; }
  const x = (t) => 50 + (c.width - 60) * (t - t0) / (t1 - t0);
  const y = (v) => c.height - 20 - (c.height - 40) * (v - v0) / (v1 - v0);
  g.fillStyle = "#46525e";
  g.fillText(v1.toFixed(2), 4, 24);
  g.fillText(v0.toFixed(2), 4, c.height - 20);
  g.fillText(`${((t1 - t0) / 1000).toFixed(0)} s`, c.width - 40, c.height - 4);
  series.forEach((s, i) => {
    g.strokeStyle = COLOURS[i % COLOURS.length];
    g.beginPath();
    s.points.forEach((p, j) => (j ? g.lineTo(x(p.t), y(p.v)) : g.moveTo(x(p.t), y(p.v))));
    g.stroke();
    g.fillStyle = g.strokeStyle;
    s.points.forEach((p) => g.fillRect(x(p.t) - 2, y(p.v) - 2, 4, 4));
  });
}

function stopLive() { liveSources.forEach((s) => s.close()); liveSources = []; }

$("#live-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  stopLive();
  const target = $("#live-target").value.trim();
  let uris = [target];
  if (!target.includes("://")) {
    const p = await coap("GET", `${em}/e/${target}/profile`, { accept: "50" });
    uris = p.ok ? JSON.parse(p.text).er : [];
  }
  series = uris.map((u) => ({ uri: u, points: [] }));
  const legend = $("#live-legend");
  legend.replaceChildren(...series.map((s, i) => { const li = el("li", s.uri); li.style.color = COLOURS[i % COLOURS.length]; return li; }));
  series.forEach((s, i) => {
    const src = new EventSource("/hc/" + s.uri);
    const onValue = (e) => {
      const v = parseFloat(e.data);
      if (!Number.isNaN(v)) { s.points.push({ t: Date.now(), v }); if (s.points.length > 500) s.points.shift(); plot(); }
      legend.children[i].textContent = `${s.uri}: ${e.data}`;
    };
    src.addEventListener("2.05", onValue);
    src.addEventListener("error", (e) => { if (e.data) legend.children[i].textContent = `${s.uri}: ${e.data}`; });
    liveSources.push(src);
  });
});
$("#live-stop").addEventListener("click", stopLive);

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
