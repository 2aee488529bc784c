// Shipment tracking: the recipient's page. It gets a delivery consumer token for this tracking ID from the token
// server (the delivery_consumer endpoint, with the user's session) and polls Fleet Engine's GetTaskTrackingInfo
// straight from the browser with it, drawing the destination, the van and the path it has driven. What Fleet Engine
// leaves out (the task's visibility settings hide it) is shown as a dash.

import { currentSession, dropSession, loadConfig, logOut, signIn } from "./session.js";
import { SVGMap } from "./map.js";
import { TokenFetchError, TokenProvider, callFleetEngine, tokenServerFetcher } from "./token-provider.js";

const $ = (id) => document.getElementById(id);
const trackingId = decodeURIComponent(location.pathname.split("/").pop() ?? "");
const pollInterval = 2000;

function showMessage(text) {
  $("message").textContent = text;
}

function formatDistance(meters) {
  if (meters === undefined || meters === null) return "—";
  return meters >= 1000 ? `${(meters / 1000).toFixed(1)} km` : `${Math.round(meters)} m`;
}

function formatETA(timestamp) {
  if (!timestamp) return "—";
  const minutes = Math.max(0, Math.round((Date.parse(timestamp) - Date.now()) / 60000));
  return minutes === 0 ? "now" : `in ${minutes} min`;
}

function formatAge(timestamp) {
  if (!timestamp) return "—";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(timestamp)) / 1000));
  return seconds < 60 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

function statusText(info) {
  if (info.state === "CLOSED") {
    if (info.taskOutcome === "SUCCEEDED") return "Delivered";
    if (info.taskOutcome === "FAILED") return "Delivery attempt failed";
    return "No longer on a route";
  }
  if (info.remainingStopCount === undefined && !info.vehicleLocation) return "Waiting for a van";
  return "On its way";
}

async function follow(session, config) {
  $("signed-in-as").textContent = session.username;
  $("log-out").hidden = false;
  $("log-out").onclick = async () => {
    await logOut(session);
    location.reload();
  };
  const provider = new TokenProvider(
    tokenServerFetcher(`/token/delivery_consumer/${encodeURIComponent(trackingId)}`, session),
  );
  const map = new SVGMap($("map"), { tileURL: config.tileURL });
  const path = [];
  const url =
    `${config.fleetEngineURL}/v1/providers/${encodeURIComponent(config.project)}` +
    `/taskTrackingInfo/${encodeURIComponent(trackingId)}`;

  for (;;) {
    let answer;
    try {
      answer = await callFleetEngine(provider, url);
    } catch (error) {
      if (error instanceof TokenFetchError && error.status === 403) {
        showMessage(`Parcel ${trackingId} is not shared with ${session.username}. Ask the sender for a new link.`);
        return;
      }
      if (error instanceof TokenFetchError && error.status === 401) {
        dropSession();
        showMessage("Your session has expired. Sign in again to keep following the parcel.");
        return start(config);
      }
      showMessage(error instanceof TokenFetchError ? error.message : `Fleet Engine cannot be reached (${error.message}).`);
      await new Promise((resolve) => setTimeout(resolve, pollInterval));
      continue;
    }
    if (answer.ok) {
      showMessage("");
      const info = await answer.json();
      render(info, map, path, provider);
      if (info.state === "CLOSED") return;
    } else if (answer.status === 404) {
      showMessage(`No parcel has the tracking ID ${trackingId}.`);
      return;
    } else {
      const body = await answer.json().catch(() => ({}));
      showMessage(`Fleet Engine answered ${answer.status}: ${body?.error?.message ?? "no details"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollInterval));
  }
}

function render(info, map, path, provider) {
  $("map-panel").hidden = false;
  $("facts-panel").hidden = false;
  $("layout").classList.remove("single");
  $("shipment-status").textContent = statusText(info);
  $("shipment-status").dataset.status = info.state ?? "";
  const stops = info.remainingStopCount;
  $("shipment-stops").textContent = stops === undefined ? "—" : String(Math.max(0, stops - 1));
  $("shipment-remaining").textContent = formatDistance(info.remainingDrivingDistanceMeters);
  $("shipment-eta").textContent = formatETA(info.estimatedArrivalTime);
  $("shipment-updated").textContent = formatAge(info.vehicleLocation?.updateTime ?? info.vehicleLocation?.serverTime);
  $("token-fetches").textContent = String(provider.fetches);
  $("token-expires").textContent = provider.expiresAt ? formatETA(new Date(provider.expiresAt).toISOString()) : "—";
  const van = info.vehicleLocation?.location;
  const last = path[path.length - 1];
  if (van && (!last || last.latitude !== van.latitude || last.longitude !== van.longitude)) path.push(van);
  map.draw({
    paths: [path, info.routePolylinePoints ?? []],
    markers: [
      { place: info.plannedLocation?.point, kind: "dropoff", label: "Your parcel", id: "destination-marker" },
      { place: van, kind: "vehicle", label: "Van", id: "vehicle-marker" },
    ],
  });
}

async function start(config) {
  let session = currentSession();
  if (!session) {
    session = await signIn($("sign-in-panel"));
  }
  return follow(session, config);
}

$("tracking-id").textContent = trackingId;
$("page-opened").textContent = new Date().toLocaleTimeString();
loadConfig()
  .then((config) => {
    if (!config.fleetEngineURL) throw new Error("The token server was not told where Fleet Engine is (--emulator-url).");
    return start(config);
  })
  .catch((error) => showMessage(error.message));
