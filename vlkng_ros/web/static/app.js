// vlkng tablet page: plain JavaScript, no build step. Talks to the JSON API of vlkng_ros/web/app.py;
// the access token travels in an HttpOnly cookie set when the page was opened with ?token=.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const state = { map: null, answer: null, selected: null, goal: null, robot: null, canNavigate: false, navActive: false };

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
async function api(path, body) {
  const opts = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: r.statusText }; }
  if (!r.ok) throw new Error((data && data.error) || r.statusText);
  return data;
}

// --- asking ------------------------------------------------------------------------------------
function figure(f, caption) {
  const fig = el("figure");
  const img = el("img", { src: f.image, alt: caption, loading: "lazy" });
  fig.appendChild(img);
  fig.appendChild(el("figcaption", {}, caption));
  return fig;
}

function typedValue(d) {
  // typed answers (answer_type + a value field) when the ask engine gives them
  if (!d.answer_type) return null;
  for (const [k, v] of Object.entries(d)) {
    if (k.startsWith("value") && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0)) {
      return [d.answer_type, Array.isArray(v) ? v.join(", ") : (typeof v === "object" ? JSON.stringify(v) : String(v))];
    }
  }
  return [d.answer_type, ""];
}

function showAnswer(d) {
  state.answer = d;
  $("answer").hidden = false;
  $("object-panel").hidden = true;
  $("answer-text").textContent = d.success ? (d.answer || (d.found ? "Found it." : "I have not seen anything like that.")) : ("Could not answer: " + d.message);
  const tv = typedValue(d);
  $("answer-typed").hidden = !tv;
  if (tv) { $("answer-type").textContent = tv[0]; $("answer-value").textContent = tv[1]; }
  $("answer-target").textContent = d.target_name ? ("About: " + d.target_name) : "";
  $("answer-note").textContent = d.message && d.message !== "ok" ? d.message : "";
  const frames = $("frames");
  frames.replaceChildren();
  (d.frames || []).forEach((f, i) => {
    const names = (f.objects || []).join(", ");
    frames.appendChild(figure(f, `${i + 1}. ${f.where.text}` + (names ? ` - ${names}` : "")));
  });
  if (d.evidence_image) { $("evidence-image").src = d.evidence_image; $("evidence-image-box").hidden = false; }
  else { $("evidence-image-box").hidden = true; }
  state.goal = d.goal ? [d.goal.x, d.goal.y] : null;
  updateGotoButton();
  if (d.target_object_id) state.selected = d.target_object_id;
  drawMap();
}

function updateGotoButton() {
  const d = state.answer;
  const ok = d && d.success && d.found && d.goal && !state.navActive;
  $("goto-btn").disabled = !ok;
  $("goto-btn").title = state.canNavigate ? "" : "Go there needs the robot (the ROS suite serves this page)";
}

async function ask(question) {
  $("ask-btn").disabled = true;
  $("answer-text").textContent = "Thinking...";
  $("answer").hidden = false;
  try {
    const d = await api("/api/ask", { question });
    showAnswer(d);
    addHistory(d);
  } catch (e) {
    $("answer-text").textContent = "Could not answer: " + e.message;
  } finally {
    $("ask-btn").disabled = false;
  }
}

function addHistory(d) {
  const li = el("li", {}, `${d.question} - ${d.success ? (d.answer || (d.found ? "found" : "not seen")) : d.message}`);
  li.addEventListener("click", () => showAnswer(d));
  $("history").prepend(li);
}

$("ask-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const q = $("question").value.trim();
  if (q) ask(q);
});

// browser speech input, where the browser has it
const Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
if (Recognition) {
  const rec = new Recognition();
  rec.lang = "en-US";
  rec.interimResults = false;
  $("mic").hidden = false;
  $("mic").addEventListener("click", () => { $("mic").classList.add("listening"); rec.start(); });
  rec.onresult = (ev) => { const q = ev.results[0][0].transcript; $("question").value = q; ask(q); };
  rec.onend = () => $("mic").classList.remove("listening");
}

// --- Go there ----------------------------------------------------------------------------------
$("goto-btn").addEventListener("click", async () => {
  const d = state.answer;
  if (!d) return;
  $("nav-state").textContent = "starting...";
  try {
    await api("/api/goto", { query: d.question });
  } catch (e) {
    $("nav-state").textContent = e.message;
  }
});
$("cancel-btn").addEventListener("click", () => api("/api/goto/cancel", {}).catch((e) => { $("nav-state").textContent = e.message; }));

function showNavigation(nav) {
  const active = nav.state === "asking" || nav.state === "navigating" || nav.state === "starting";
  state.navActive = active;
  $("cancel-btn").hidden = !active;
  let text = "";
  if (nav.state === "asking") text = "Looking it up...";
  else if (nav.state === "navigating") text = nav.distance_remaining == null ? "Driving..."
    : `Driving: ${Number(nav.distance_remaining).toFixed(1)} m to go`;
  else if (nav.state === "starting") text = "Starting...";
  else if (nav.state === "arrived") text = "Arrived.";
  else if (nav.state === "failed" || nav.state === "canceled") text = nav.message || nav.state;
  $("nav-state").textContent = text;
  $("nav-state").dataset.state = nav.state || "idle";
  if (nav.robot) { state.robot = nav.robot; }
  if (nav.goal) { state.goal = [nav.goal.x, nav.goal.y]; }
  updateGotoButton();
  drawMap();
}

// --- live status (Server-Sent Events) ---------------------------------------------------------
function showStatus(st) {
  $("st-conn").textContent = "live";
  $("st-fps").textContent = st.frames_per_s === null || st.frames_per_s === undefined ? "" : `${st.frames_per_s} frames/s`;
  $("st-kf").textContent = `${st.keyframes} keyframes (${st.keyframes_per_s}/s)`;
  $("st-chunks").textContent = `chunks: ${st.chunks_queued} queued, ${st.chunks_perceived} perceived, ${st.chunks_merged} merged`;
  $("st-objects").textContent = `${st.objects} objects`;
  const lat = [];
  if (st.model_latency_s !== null && st.model_latency_s !== undefined) lat.push(`model ${st.model_latency_s} s`);
  if (st.ask_latency_s !== null && st.ask_latency_s !== undefined) lat.push(`ask ${st.ask_latency_s} s`);
  $("st-latency").textContent = lat.join(", ");
  $("warnings").textContent = (st.warnings || []).join(" | ");
  state.canNavigate = !!st.can_navigate;
  updateGotoButton();
  if (state.map && st.objects !== state.map.objects.length && !state.reloading) {
    state.reloading = true;
    loadMap().finally(() => { state.reloading = false; });
  }
}
function connectEvents() {
  const es = new EventSource("/api/events");
  es.addEventListener("status", (ev) => showStatus(JSON.parse(ev.data)));
  es.addEventListener("navigation", (ev) => showNavigation(JSON.parse(ev.data)));
  es.onerror = () => { $("st-conn").textContent = "reconnecting..."; };
}

// --- the map -----------------------------------------------------------------------------------
async function loadMap() {
  state.map = await api("/api/map");
  drawMap();
}

function matches(o, f) {
  if (!f) return true;
  return o.label.toLowerCase().includes(f) || (o.place || "").toLowerCase().includes(f) || o.name.toLowerCase().includes(f);
}

function drawMap() {
  const m = state.map;
  const root = $("map");
  if (!m) return;
  root.replaceChildren();
  const [x0, y0, x1, y1] = m.bounds;
  const span = Math.max(x1 - x0, y1 - y0, 2);
  const pad = span * 0.06;
  const u = span / 100;  // one "unit" for strokes, dots and text at any map size
  root.setAttribute("viewBox", `${x0 - pad} ${-y1 - pad} ${x1 - x0 + 2 * pad} ${y1 - y0 + 2 * pad}`);
  const g = svg("g");
  root.appendChild(g);
  for (const t of m.tours) {
    if (t.path.length > 1) g.appendChild(svg("polyline", { class: "path", "stroke-width": 0.5 * u, points: t.path.map(([x, y]) => `${x},${-y}`).join(" "), "data-tour": t.tour_id }));
  }
  for (const k of m.keyframes) g.appendChild(svg("circle", { class: "kf", cx: k.x, cy: -k.y, r: 0.35 * u }));
  const f = $("filter").value.trim().toLowerCase();
  let shown = 0;
  for (const o of m.objects) {
    const ok = matches(o, f);
    shown += ok ? 1 : 0;
    const cls = "obj" + (ok ? "" : " dim") + (state.selected === o.id ? " selected" : "");
    const og = svg("g", { class: cls, "data-id": o.id, "data-label": o.label });
    og.appendChild(svg("circle", { cx: o.x, cy: -o.y, r: Math.max(o.size_m / 2, 0.8 * u), fill: o.colour, "stroke-width": 0.2 * u }));
    og.appendChild(svg("text", { x: o.x + 0.9 * u, y: -o.y - 0.9 * u, "font-size": 2.2 * u }, o.label));
    og.appendChild(svg("title", {}, `${o.name} (${o.sightings} sightings)`));
    og.addEventListener("click", () => showObject(o.id));
    g.appendChild(og);
  }
  if (state.goal) {
    const [gx, gy] = state.goal;
    g.appendChild(svg("circle", { class: "goal", id: "goal-marker", cx: gx, cy: -gy, r: 1.6 * u, "stroke-width": 0.5 * u }));
    g.appendChild(svg("path", { class: "goal", d: `M${gx - 2.4 * u},${-gy} h${4.8 * u} M${gx},${-gy - 2.4 * u} v${4.8 * u}`, "stroke-width": 0.4 * u }));
  }
  if (state.robot) {
    const r = state.robot;
    g.appendChild(svg("circle", { class: "robot", id: "robot-marker", cx: r.x, cy: -r.y, r: 1.2 * u }));
  }
  $("map-count").textContent = `${shown} of ${m.objects.length} objects`;
}
$("filter").addEventListener("input", drawMap);

async function showObject(id) {
  state.selected = id;
  drawMap();
  let d;
  try { d = await api(`/api/object/${encodeURIComponent(id)}`); } catch (e) { return; }
  $("object-panel").hidden = false;
  $("obj-name").textContent = d.name;
  const attrs = Object.entries(d.attributes || {}).map(([k, v]) => `${k} ${v}`).join(", ");
  $("obj-meta").textContent = `${d.sightings} sightings in ${d.tours.length} tour(s): ${d.tours.join(", ")}. First seen ${d.first_seen}, last seen ${d.last_seen}.` + (attrs ? ` ${attrs}.` : "");
  $("obj-relations").replaceChildren(...d.relations.slice(0, 12).map((r) => el("li", {}, r.text)));
  $("obj-history").replaceChildren(...(d.history.length ? d.history : [{ time: d.first_seen, x: d.x, y: d.y }]).map(
    (h) => el("li", {}, `${h.time}: (${Number(h.x).toFixed(1)}, ${Number(h.y).toFixed(1)}) m`)));
  $("obj-frames").replaceChildren(...d.frames.map((f) => figure(f, f.where.text)));
  $("object-panel").scrollIntoView({ behavior: "smooth", block: "nearest" });
}

// --- start -------------------------------------------------------------------------------------
(async function start() {
  connectEvents();
  try { await loadMap(); } catch (e) { $("map-count").textContent = "map: " + e.message; }
  try { (await api("/api/history")).forEach(addHistory); } catch (e) { /* empty history */ }
  document.body.dataset.ready = "1";
})();
