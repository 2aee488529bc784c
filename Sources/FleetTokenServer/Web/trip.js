// Journey sharing: the rider's page. It gets a trip token for this trip from the token server (the consumer
// endpoint, with the user's session) and polls Fleet Engine's GetTrip straight from the browser with it, drawing
// the pickup, the drop-off, the vehicle and the path it has driven.

import { currentSession, dropSession, loadConfig, logOut, signIn } from "./session.js";
import { SVGMap } from "./map.js";
import { TokenFetchError, TokenProvider, callFleetEngine, tokenServerFetcher } from "./token-provider.js";

const $ = (id) => document.getElementById(id);
const tripId = decodeURIComponent(location.pathname.split("/").pop() ?? "");
const pollInterval = 2000;

const statusText = {
  NEW: "Looking for a driver",
  ENROUTE_TO_PICKUP: "Driver on the way",
  ARRIVED_AT_PICKUP: "Driver has arrived",
  ARRIVED_AT_INTERMEDIATE_DESTINATION: "At a stop",
  ENROUTE_TO_INTERMEDIATE_DESTINATION: "On the way to a stop",
  ENROUTE_TO_DROPOFF: "On the way to your destination",
  COMPLETE: "Trip complete",
  CANCELED: "Trip canceled",
};

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

async function follow(session, config) {
  $("signed-in-as").textContent = session.username;
  $("log-out").hidden = false;
  $("log-out").onclick = async () => {
    await logOut(session);
    location.reload();
  };
  const provider = new TokenProvider(tokenServerFetcher(`/token/consumer/${encodeURIComponent(tripId)}`, session));
  const map = new SVGMap($("map"), { tileURL: config.tileURL });
  const path = [];
  const url = `${config.fleetEngineURL}/v1/providers/${encodeURIComponent(config.project)}/trips/${encodeURIComponent(tripId)}`;

  for (;;) {
    let answer;
    try {
      answer = await callFleetEngine(provider, url);
    } catch (error) {
      if (error instanceof TokenFetchError && error.status === 403) {
        showMessage(`Trip ${tripId} is not shared with ${session.username}. Ask for a new link.`);
        return;
      }
      if (error instanceof TokenFetchError && error.status === 401) {
        dropSession();
        showMessage("Your session has expired. Sign in again to keep following the trip.");
        return start(config);
      }
      showMessage(error instanceof TokenFetchError ? error.message : `Fleet Engine cannot be reached (${error.message}).`);
      await new Promise((resolve) => setTimeout(resolve, pollInterval));
      continue;
    }
    if (answer.ok) {
      showMessage("");
      const trip = await answer.json();
      render(trip, map, path, provider);
      if (trip.tripStatus === "COMPLETE" || trip.tripStatus === "CANCELED") return;
    } else if (answer.status === 404) {
      showMessage(`Trip ${tripId} does not exist.`);
      return;
    } else {
      const body = await answer.json().catch(() => ({}));
      showMessage(`Fleet Engine answered ${answer.status}: ${body?.error?.message ?? "no details"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollInterval));
  }
}

function render(trip, map, path, provider) {
  $("map-panel").hidden = false;
  $("facts-panel").hidden = false;
  $("layout").classList.remove("single");
  $("trip-status").textContent = statusText[trip.tripStatus] ?? trip.tripStatus ?? "Unknown";
  $("trip-status").dataset.status = trip.tripStatus ?? "";
  $("trip-vehicle").textContent = trip.vehicleId || "not assigned yet";
  $("trip-remaining").textContent = formatDistance(trip.remainingDistanceMeters);
  $("trip-eta").textContent = formatETA(trip.etaToFirstWaypoint);
  $("trip-updated").textContent = formatAge(trip.lastLocation?.updateTime ?? trip.lastLocation?.serverTime);
  $("token-fetches").textContent = String(provider.fetches);
  $("token-expires").textContent = provider.expiresAt ? formatETA(new Date(provider.expiresAt).toISOString()) : "—";
  const vehicle = trip.lastLocation?.location;
  const last = path[path.length - 1];
  if (vehicle && (!last || last.latitude !== vehicle.latitude || last.longitude !== vehicle.longitude)) path.push(vehicle);
  map.draw({
    paths: [path],
    markers: [
      { place: trip.pickupPoint?.point, kind: "pickup", label: "Pickup", id: "pickup-marker" },
      { place: trip.dropoffPoint?.point, kind: "dropoff", label: "Drop-off", id: "dropoff-marker" },
      { place: vehicle, kind: "vehicle", label: trip.vehicleId, id: "vehicle-marker" },
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

$("trip-id").textContent = tripId;
$("page-opened").textContent = new Date().toLocaleTimeString();
loadConfig()
  .then((config) => {
    if (!config.fleetEngineURL) throw new Error("The token server was not told where Fleet Engine is (--emulator-url).");
    return start(config);
  })
  .catch((error) => showMessage(error.message));
