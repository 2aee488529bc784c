// Journey sharing: the rider's page. It gets a trip token for this trip from the token server (the consumer
// endpoint, with the user's session) and polls Fleet Engine's GetTrip straight from the browser with it, drawing
// the pickup, the drop-off, the vehicle and the path it has driven.

import { $, formatAge, formatDistance, formatETA, run, showProgress } from "./follow.js";

const tripId = decodeURIComponent(location.pathname.split("/").pop() ?? "");

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

function render(trip, map, path, provider) {
  const vehicle = trip.lastLocation?.location;
  showProgress(provider, path, vehicle);
  $("trip-status").textContent = statusText[trip.tripStatus] ?? trip.tripStatus ?? "Unknown";
  $("trip-status").dataset.status = trip.tripStatus ?? "";
  $("trip-vehicle").textContent = trip.vehicleId || "not assigned yet";
  $("trip-remaining").textContent = formatDistance(trip.remainingDistanceMeters);
  $("trip-eta").textContent = formatETA(trip.etaToFirstWaypoint);
  $("trip-updated").textContent = formatAge(trip.lastLocation?.updateTime ?? trip.lastLocation?.serverTime);
  map.draw({
    paths: [path],
    markers: [
      { place: trip.pickupPoint?.point, kind: "pickup", label: "Pickup", id: "pickup-marker" },
      { place: trip.dropoffPoint?.point, kind: "dropoff", label: "Drop-off", id: "dropoff-marker" },
      { place: vehicle, kind: "vehicle", label: trip.vehicleId, id: "vehicle-marker" },
    ],
  });
}

run({
  id: tripId,
  idElement: "trip-id",
  tokenPath: `/token/consumer/${encodeURIComponent(tripId)}`,
  url: (config) =>
    `${config.fleetEngineURL}/v1/providers/${encodeURIComponent(config.project)}/trips/${encodeURIComponent(tripId)}`,
  notShared: (username) => `Trip ${tripId} is not shared with ${username}. Ask for a new link.`,
  expired: "Your session has expired. Sign in again to keep following the trip.",
  notFound: `Trip ${tripId} does not exist.`,
  render,
  finished: (trip) => trip.tripStatus === "COMPLETE" || trip.tripStatus === "CANCELED",
});
