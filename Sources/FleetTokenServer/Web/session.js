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

/** Shows the sign-in form in `form` and resolves with the session once the user has signed in. */
export function signIn(form, { requiredRole } = {}) {
  const message = form.querySelector(".form-error");
  return new Promise((resolve) => {
    const submitted = async (event) => {
      event.preventDefault();
      message.textContent = "";
      try {
        const session = await logIn(form.elements.username.value, form.elements.password.value);
        if (requiredRole && session.role !== requiredRole) {
          await logOut(session);
          throw new Error(`This page is for ${requiredRole}s; ${session.username} is a ${session.role}.`);
        }
        form.removeEventListener("submit", submitted);
        form.reset();
        resolve(session);
      } catch (error) {
        message.textContent = error.message;
      }
    };
    form.addEventListener("submit", submitted);
  });
}
