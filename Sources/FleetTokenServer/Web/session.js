// The app user's session with this token server (same origin), kept in sessionStorage: it ends with the tab.

const key = "fleetauth.session";

/** The stored session `{token, username, role, expiresAt}`, or null when none is valid. */
export function currentSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(key) ?? "null");
    if (session && session.expiresAt > Date.now()) return session;
  } catch {}
  sessionStorage.removeItem(key);
  return null;
}

/** Logs in with a username and password; resolves to the session or rejects with a message for the user. */
export async function logIn(username, password) {
  const answer = await fetch("/v1/sessions", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  const body = await answer.json().catch(() => ({}));
  if (answer.status === 429) throw new Error("Too many failed logins; try again later.");
  if (!answer.ok) throw new Error(body?.error?.message ?? `The login failed (${answer.status}).`);
  const session = {
    token: body.sessionToken, username: body.username, role: body.role, expiresAt: body.expiresAt,
  };
  sessionStorage.setItem(key, JSON.stringify(session));
  return session;
}

/** Ends the session here and on the server. */
export async function logOut(session) {
  sessionStorage.removeItem(key);
  if (session) {
    await fetch("/v1/sessions/current", {
      method: "DELETE", headers: { Authorization: `Bearer ${session.token}` },
    }).catch(() => {});
  }
}

/** Forgets the session without calling the server (it was refused there). */
export function dropSession() {
  sessionStorage.removeItem(key);
}

/** Where Fleet Engine is: `{fleetEngineURL, project, tileURL}`. */
export async function loadConfig() {
  const answer = await fetch("/app/config.json");
  if (!answer.ok) throw new Error("The token server did not say where Fleet Engine is.");
  return answer.json();
}

/**
 * Shows a sign-in form in `panel` (titled by its `data-title`) and resolves with the session once the user has
 * signed in; refusals are shown in the form. With `requiredRole`, a user of another role is signed out again.
 */
export function signIn(panel, { requiredRole } = {}) {
  const form = document.createElement("form");
  form.className = "sign-in";
  form.id = "sign-in";
  const heading = document.createElement("h2");
  heading.textContent = panel.dataset.title ?? "Sign in";
  const field = (name, type, autocomplete, placeholder) => {
    const input = document.createElement("input");
    Object.assign(input, { name, type, autocomplete, placeholder, required: true });
    return input;
  };
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = "Sign in";
  const message = document.createElement("div");
  message.className = "form-error";
  message.setAttribute("role", "alert");
  form.append(
    field("username", "text", "username", "Username"),
    field("password", "password", "current-password", "Password"),
    button, message,
  );
  panel.replaceChildren(heading, form);
  panel.hidden = false;
  return new Promise((resolve) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      message.textContent = "";
      try {
        const session = await logIn(form.elements.username.value, form.elements.password.value);
        if (requiredRole && session.role !== requiredRole) {
          await logOut(session);
          throw new Error(`This page is for ${requiredRole}s; ${session.username} is a ${session.role}.`);
        }
        panel.hidden = true;
        panel.replaceChildren();
        resolve(session);
      } catch (error) {
        message.textContent = error.message;
      }
    });
  });
}
