// The fleet console, for operators: every vehicle on the map with its state and the age of its last location (read
// from Fleet Engine with a fleet-reader token), the active trips, the tokens this server issued (its audit log:
// who, which type, the scope, the key, the expiry — never a token) and the tokens Fleet Engine refused, by reason
// (its /metrics), and the latest calls Fleet Engine answered (its request log, read through Cloud Logging's
// entries:list: each opens to its request, answer and the decision that allowed or refused it). Refreshed every two
// seconds.

import { currentSession, dropSession, loadConfig, logOut, signIn } from "./session.js";
import { SVGMap } from "./map.js";
import { TokenFetchError, TokenProvider, callFleetEngine, tokenServerFetcher } from "./token-provider.js";

const $ = (id) => document.getElementById(id);
const refreshInterval = 2000;

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function fillTable(id, rows) {
  const body = $(id).tBodies[0];
  body.replaceChildren(...rows.map(({ cells, data }) => {
    const tr = document.createElement("tr");
    for (const [key, value] of Object.entries(data ?? {})) tr.dataset[key] = value;
    tr.append(...cells);
    return tr;
  }));
}

function age(timestamp) {
  if (!timestamp) return "never";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(timestamp)) / 1000));
  return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

const lastSegment = (name) => (name ?? "").split("/").pop();

/** `fleet_engine_token_rejections_total{reason="…"} N` lines with N > 0. */
function parseRejections(text) {
  const counts = [];
  for (const line of text.split("\n")) {
    const match = line.match(/^fleet_engine_token_rejections_total\{reason="([^"]+)"\} (\d+(?:\.\d+)?)$/);
    if (match && Number(match[2]) > 0) counts.push({ reason: match[1], count: Number(match[2]) });
  }
  return counts.sort((a, b) => b.count - a.count);
}

async function json(answer, what) {
  if (!answer.ok) {
    const body = await answer.json().catch(() => ({}));
    throw new Error(`${what}: ${answer.status} ${body?.error?.message ?? ""}`.trim());
  }
  return answer.json();
}

/** A Cloud Logging query string literal. */
const quoted = (text) => `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

/** The token's issuer (its service account), read from its payload, to leave the console's own calls out. */
function issuer(token) {
  try {
    const part = token.split(".")[1].replaceAll("-", "+").replaceAll("_", "/");
    return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4))).iss ?? null;
  } catch {
    return null;
  }
}

/** The request log query the Requests filters ask for. */
async function requestsQuery(provider) {
  const terms = [];
  for (const [id, label] of [["filter-vehicle", "vehicle_id"], ["filter-trip", "trip_id"], ["filter-task", "task_id"]]) {
    const value = $(id).value.trim();
    if (value) terms.push(`labels.${label}=${quoted(value)}`);
  }
  const code = $("filter-code").value;
  if (code === "OK") terms.push("severity=INFO");
  else if (code) terms.push(`jsonPayload.errorResponse.code=${quoted(code)}`);
  if ($("filter-own").checked) {
    const own = issuer(await provider.token());
    if (own) terms.push(`NOT jsonPayload.fleetauthDecision.account=${quoted(own)}`);
  }
  return terms.join(" AND ");
}

/** The insertId of the request whose details are open. */
let selectedRequest = null;

function showRequests(entries) {
  $("requests-empty").hidden = entries.length > 0;
  fillTable("requests", entries.map((entry) => {
    const payload = entry.jsonPayload ?? {};
    const code = payload.errorResponse?.code ?? "OK";
    const decision = payload.fleetauthDecision ?? {};
    const method = (payload["@type"] ?? "").split(".").pop().replace(/Log$/, "");
    const names = Object.entries(entry.labels ?? {}).map(([key, value]) => `${key}=${value}`).join(" ");
    const why = code === "OK" ? "" : (decision.outcome === "REFUSED" ? decision.explanation : payload.errorResponse?.message) ?? "";
    return {
      data: { insertId: entry.insertId, code },
      cells: [
        cell(new Date(entry.timestamp).toLocaleTimeString()), cell(code, code === "OK" ? "mono" : "mono refused"),
        cell(`${method} (${payload.fleetauthTransport ?? "?"})`), cell(names, "mono"), cell(why),
      ],
    };
  }));
  const rows = [...$("requests").tBodies[0].rows];
  rows.forEach((row, index) => {
    row.classList.add("selectable");
    row.classList.toggle("selected", row.dataset.insertId === selectedRequest);
    row.onclick = () => {
      selectedRequest = row.dataset.insertId === selectedRequest ? null : row.dataset.insertId;
      rows.forEach((other) => other.classList.toggle("selected", other.dataset.insertId === selectedRequest));
      showDetail(selectedRequest ? entries[index] : null);
    };
  });
  const open = entries.find((entry) => entry.insertId === selectedRequest);
  if (open) showDetail(open);
}

function showDetail(entry) {
  const detail = $("request-detail");
  detail.hidden = !entry;
  if (!entry) return;
  const payload = entry.jsonPayload ?? {};
  const parts = { request: payload.request, decision: payload.fleetauthDecision };
  if (payload.response) parts.response = payload.response;
  if (payload.errorResponse) parts.errorResponse = payload.errorResponse;
  detail.textContent = `${entry.logName}\n${entry.timestamp}  ${entry.severity}\n\n` + JSON.stringify(parts, null, 2);
}

// ListVehicles requires the type categories to list (UNKNOWN is refused): every other one.
const everyCategory = ["AUTO", "TAXI", "TRUCK", "TWO_WHEELER", "BICYCLE", "PEDESTRIAN"]
  .map((category) => `vehicleTypeCategories=${category}`)
  .join("&");

async function refresh(session, config, provider, map) {
  const base = `${config.fleetEngineURL}/v1/providers/${encodeURIComponent(config.project)}`;
  // The Deliveries API's lists are optional: an emulator without it answers 404, and the tables stay empty.
  const optional = (answer) => (answer.ok ? answer.json() : {});
  const logQuery = await requestsQuery(provider);
  const [vehicleList, deliveryVehicleList, taskList, audit, metrics, requests] = await Promise.all([
    callFleetEngine(provider, `${base}/vehicles?${everyCategory}&pageSize=500`).then((a) => json(a, "ListVehicles")),
    callFleetEngine(provider, `${base}/deliveryVehicles?pageSize=500`).then(optional),
    callFleetEngine(provider, `${base}/tasks?pageSize=100&filter=${encodeURIComponent("state = OPEN")}`).then(optional),
    fetch("/v1/admin/audit?limit=30", { headers: { Authorization: `Bearer ${session.token}` } }).then((a) => {
      if (a.status === 401) throw new TokenFetchError(401, "session");
      return json(a, "The audit log");
    }),
    // The rejections by reason are served only to a token that may list the whole fleet, as this page's is.
    callFleetEngine(provider, `${config.fleetEngineURL}/metrics`).then((a) => (a.ok ? a.text() : "")),
    // The request log is optional too: an emulator started with --request-log off answers 404.
    callFleetEngine(provider, `${config.fleetEngineURL}/v2/entries:list`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        resourceNames: [`projects/${config.project}`], filter: logQuery, orderBy: "timestamp desc", pageSize: 30,
      }),
    }).then(optional),
  ]);
  const vehicles = vehicleList.vehicles ?? [];
  const tripIds = [...new Set(vehicles.flatMap((v) => v.currentTrips ?? []))].slice(0, 50);
  const trips = (await Promise.all(tripIds.map((id) =>
    callFleetEngine(provider, `${base}/trips/${encodeURIComponent(id)}`).then((a) => (a.ok ? a.json() : null))
  ))).filter(Boolean);

  const deliveryVehicles = deliveryVehicleList.deliveryVehicles ?? [];
  const tasks = taskList.tasks ?? [];
  for (const id of [
    "map-panel", "vehicles-panel", "trips-panel", "delivery-vehicles-panel", "tasks-panel", "rejections-panel",
    "requests-panel", "tokens-panel",
  ]) $(id).hidden = false;
  showRequests(requests.entries ?? []);
  $("layout").classList.remove("single");
  map.draw({
    markers: vehicles.map((v) => ({
      place: v.lastLocation?.location,
      kind: v.vehicleState === "ONLINE" ? "vehicle" : "idle",
      label: lastSegment(v.name),
      id: `vehicle-${lastSegment(v.name)}`,
    })).concat(deliveryVehicles.map((v) => ({
      place: v.lastLocation?.location,
      kind: "vehicle",
      label: lastSegment(v.name),
      id: `delivery-vehicle-${lastSegment(v.name)}`,
    }))),
  });
  $("delivery-vehicle-count").textContent = String(deliveryVehicles.length);
  fillTable("delivery-vehicles", deliveryVehicles.map((v) => ({
    data: { deliveryVehicleId: lastSegment(v.name) },
    cells: [
      cell(lastSegment(v.name), "mono"),
      cell(v.lastLocation?.location ? age(v.lastLocation.updateTime ?? v.lastLocation.serverTime) : "no location"),
      cell(String((v.remainingVehicleJourneySegments ?? []).length)),
    ],
  })));
  $("task-count").textContent = String(Number(taskList.totalSize ?? tasks.length));
  fillTable("tasks", tasks.map((t) => ({
    data: { taskId: lastSegment(t.name) },
    cells: [
      cell(lastSegment(t.name), "mono"), cell(t.type ?? ""), cell(t.trackingId ?? "—", "mono"),
      cell(t.deliveryVehicleId ?? "not assigned", "mono"),
    ],
  })));
  $("vehicle-count").textContent = String(vehicles.length);
  fillTable("vehicles", vehicles.map((v) => ({
    data: { vehicleId: lastSegment(v.name), state: v.vehicleState ?? "" },
    cells: [
      cell(lastSegment(v.name), "mono"), cell(v.vehicleState ?? "UNKNOWN"),
      cell(v.lastLocation?.location ? age(v.lastLocation.updateTime ?? v.lastLocation.serverTime) : "no location"),
      cell(String((v.currentTrips ?? []).length)),
    ],
  })));
  $("trip-count").textContent = String(trips.length);
  fillTable("trips", trips.map((t) => ({
    data: { tripId: lastSegment(t.name) },
    cells: [
      cell(lastSegment(t.name), "mono"), cell(t.tripStatus ?? ""), cell(t.vehicleId ?? "", "mono"),
      cell(t.remainingDistanceMeters !== undefined ? `${(t.remainingDistanceMeters / 1000).toFixed(1)} km` : "—"),
    ],
  })));
  const rejections = parseRejections(metrics);
  $("rejections-empty").hidden = rejections.length > 0;
  fillTable("rejections", rejections.map((r) => ({ data: { reason: r.reason }, cells: [cell(r.reason, "mono"), cell(String(r.count))] })));
  fillTable("tokens", (audit.entries ?? []).map((e) => ({
    data: { user: e.username, type: e.tokenType },
    cells: [
      cell(new Date(e.issuedAt).toLocaleTimeString()), cell(e.username), cell(e.tokenType), cell(e.scope, "mono"),
      cell(e.kid.slice(0, 12) + "…", "mono"), cell(new Date(e.expiresAt).toLocaleTimeString()),
    ],
  })));
  $("updated").textContent = `Updated ${new Date().toLocaleTimeString()} · token ${provider.fetches}`;
}

async function run(config) {
  let session = currentSession();
  if (session && session.role !== "operator") {
    await logOut(session);
    session = null;
  }
  if (!session) {
    session = await signIn($("sign-in-panel"), { requiredRole: "operator" });
  }
  $("signed-in-as").textContent = session.username;
  $("log-out").hidden = false;
  $("log-out").onclick = async () => {
    await logOut(session);
    location.reload();
  };
  const provider = new TokenProvider(tokenServerFetcher("/token/fleet_reader", session));
  // The filters apply at the next refresh; Enter must not reload the page.
  $("requests-filter").onsubmit = (event) => event.preventDefault();
  const map = new SVGMap($("map"), { tileURL: config.tileURL });
  for (;;) {
    try {
      await refresh(session, config, provider, map);
      $("message").textContent = "";
    } catch (error) {
      if (error instanceof TokenFetchError && error.status === 401) {
        dropSession();
        $("message").textContent = "Your session has expired. Sign in again.";
        return run(config);
      }
      $("message").textContent = error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, refreshInterval));
  }
}

loadConfig()
  .then((config) => {
    if (!config.fleetEngineURL) throw new Error("The token server was not told where Fleet Engine is (--emulator-url).");
    return run(config);
  })
  .catch((error) => ($("message").textContent = error.message));
