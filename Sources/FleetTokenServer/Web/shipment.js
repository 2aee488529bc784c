// Shipment tracking: the recipient's page. It gets a delivery consumer token for this tracking ID from the token
// server (the delivery_consumer endpoint, with the user's session) and polls Fleet Engine's GetTaskTrackingInfo
// straight from the browser with it, drawing the destination, the van and the path it has driven. What Fleet Engine
// leaves out (the task's visibility settings hide it) is shown as a dash.

import { $, formatAge, formatDistance, formatETA, run, showProgress } from "./follow.js";

const trackingId = decodeURIComponent(location.pathname.split("/").pop() ?? "");

function statusText(info) {
  if (info.state === "CLOSED") {
    if (info.taskOutcome === "SUCCEEDED") return "Delivered";
    if (info.taskOutcome === "FAILED") return "Delivery attempt failed";
    return "No longer on a route";
  }
  if (info.remainingStopCount === undefined && !info.vehicleLocation) return "Waiting for a van";
  return "On its way";
}

function render(info, map, path, provider) {
  const van = info.vehicleLocation?.location;
  showProgress(provider, path, van);
  $("shipment-status").textContent = statusText(info);
  $("shipment-status").dataset.status = info.state ?? "";
  const stops = info.remainingStopCount;
  $("shipment-stops").textContent = stops === undefined ? "—" : String(Math.max(0, stops - 1));
  $("shipment-remaining").textContent = formatDistance(info.remainingDrivingDistanceMeters);
  $("shipment-eta").textContent = formatETA(info.estimatedArrivalTime);
  $("shipment-updated").textContent = formatAge(info.vehicleLocation?.updateTime ?? info.vehicleLocation?.serverTime);
  map.draw({
    paths: [path, info.routePolylinePoints ?? []],
    markers: [
      { place: info.plannedLocation?.point, kind: "dropoff", label: "Your parcel", id: "destination-marker" },
      { place: van, kind: "vehicle", label: "Van", id: "vehicle-marker" },
    ],
  });
}

run({
  id: trackingId,
  idElement: "tracking-id",
  tokenPath: `/token/delivery_consumer/${encodeURIComponent(trackingId)}`,
  url: (config) =>
    `${config.fleetEngineURL}/v1/providers/${encodeURIComponent(config.project)}` +
    `/taskTrackingInfo/${encodeURIComponent(trackingId)}`,
  notShared: (username) => `Parcel ${trackingId} is not shared with ${username}. Ask the sender for a new link.`,
  expired: "Your session has expired. Sign in again to keep following the parcel.",
  notFound: `No parcel has the tracking ID ${trackingId}.`,
  render,
  finished: (info) => info.state === "CLOSED",
});
