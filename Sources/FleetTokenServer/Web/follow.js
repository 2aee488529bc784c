// What the two following pages share — journey sharing (trip.js) and shipment tracking (shipment.js): sign in, get a
// consumer token for the one resource from the token server with the user's session, poll Fleet Engine with it
// straight from the browser, and say in words what went wrong. Each page supplies its token path, its Fleet Engine
// URL, its messages and how it draws an answer.

import { currentSession, dropSession, loadConfig, logOut, signIn } from "./session.js";
import { SVGMap } from "./map.js";
import { TokenFetchError, TokenProvider, callFleetEngine, tokenServerFetcher } from "./token-provider.js";

export const $ = (id) => document.getElementById(id);
const pollInterval = 2000;

export function showMessage(text) {
  $("message").textContent = text;
}

export function formatDistance(meters) {
  if (meters === undefined || meters === null) return "—";
  return meters >= 1000 ? `${(meters / 1000).toFixed(1)} km` : `${Math.round(meters)} m`;
}

export function formatETA(timestamp) {
  if (!timestamp) return "—";
  const minutes = Math.max(0, Math.round((Date.parse(timestamp) - Date.now()) / 60000));
  return minutes === 0 ? "now" : `in ${minutes} min`;
}

export function formatAge(timestamp) {
  if (!timestamp) return "—";
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(timestamp)) / 1000));
  return seconds < 60 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

/// Shows the panels and the token's figures, and adds the vehicle's position to the driven path when it moved.
export function showProgress(provider, path, position) {
  $("map-panel").hidden = false;
  $("facts-panel").hidden = false;
  $("layout").classList.remove("single");
  $("token-fetches").textContent = String(provider.fetches);
  $("token-expires").textContent = provider.expiresAt ? formatETA(new Date(provider.expiresAt).toISOString()) : "—";
  const last = path[path.length - 1];
  if (position && (!last || last.latitude !== position.latitude || last.longitude !== position.longitude)) {
    path.push(position);
  }
}

// page: { id, tokenPath, url(config), notShared(username), expired, notFound, render(answer, map, path, provider),
// finished(answer) }
async function follow(page, session, config) {
  $("signed-in-as").textContent = session.username;
  $("log-out").hidden = false;
  $("log-out").onclick = async () => {
    await logOut(session);
    location.reload();
  };
  const provider = new TokenProvider(tokenServerFetcher(page.tokenPath, session));
  const map = new SVGMap($("map"), { tileURL: config.tileURL });
  const path = [];
  const url = page.url(config);

  for (;;) {
    let answer;
    try {
      answer = await callFleetEngine(provider, url);
    } catch (error) {
      if (error instanceof TokenFetchError && error.status === 403) {
        showMessage(page.notShared(session.username));
        return;
      }
      if (error instanceof TokenFetchError && error.status === 401) {
        dropSession();
        showMessage(page.expired);
        return start(page, config);
      }
      showMessage(error instanceof TokenFetchError ? error.message : `Fleet Engine cannot be reached (${error.message}).`);
      await new Promise((resolve) => setTimeout(resolve, pollInterval));
      continue;
    }
    if (answer.ok) {
      showMessage("");
      const body = await answer.json();
      page.render(body, map, path, provider);
      if (page.finished(body)) return;
    } else if (answer.status === 404) {
      showMessage(page.notFound);
      return;
    } else {
      const body = await answer.json().catch(() => ({}));
      showMessage(`Fleet Engine answered ${answer.status}: ${body?.error?.message ?? "no details"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollInterval));
  }
}

async function start(page, config) {
  let session = currentSession();
  if (!session) {
    session = await signIn($("sign-in-panel"));
  }
  return follow(page, session, config);
}

/// Runs a following page: the resource's ID in the element `page.idElement`, then sign-in and polling.
export function run(page) {
  $(page.idElement).textContent = page.id;
  $("page-opened").textContent = new Date().toLocaleTimeString();
  loadConfig()
    .then((config) => {
      if (!config.fleetEngineURL) throw new Error("The token server was not told where Fleet Engine is (--emulator-url).");
      return start(page, config);
    })
    .catch((error) => showMessage(error.message));
}
