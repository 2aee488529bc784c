// Fleet Engine tokens in the browser, with the contract of Google's JavaScript SDKs: an auth-token fetcher is an
// async function returning `{token, expiresInSeconds}`. The provider keeps one token, fetches a new one before the
// old expires (a fifth of its lifetime before, at most a minute), never runs two fetches at once, and drops a token
// Fleet Engine refused so that the caller's one retry gets a fresh one.

/** A failed token fetch, with the token server's HTTP status (0 when it could not be reached). */
export class TokenFetchError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** A fetcher for one of this token server's endpoints (`/token/consumer/{tripId}`, `/token/fleet_reader`). */
export function tokenServerFetcher(path, session) {
  return async () => {
    let answer;
    try {
      answer = await fetch(path, { headers: { Authorization: `Bearer ${session.token}` } });
    } catch {
      throw new TokenFetchError(0, "The token server cannot be reached.");
    }
    const body = await answer.json().catch(() => ({}));
    if (!answer.ok) throw new TokenFetchError(answer.status, body?.error?.message ?? `HTTP ${answer.status}`);
    return { token: body.token, expiresInSeconds: body.expiresInSeconds };
  };
}

export class TokenProvider {
  #fetcher;
  #current = null; // {token, expiresAt, refreshAt}
  #inFlight = null;

  /** Counts for the page's status line. */
  fetches = 0;

  constructor(fetcher) {
    this.#fetcher = fetcher;
  }

  /** When the current token expires (ms since the epoch), or null. */
  get expiresAt() {
    return this.#current?.expiresAt ?? null;
  }

  /** A token valid for a while yet: the cached one, or the result of the one fetch in flight. */
  async token() {
    const now = Date.now();
    if (this.#current && now < this.#current.refreshAt) return this.#current.token;
    if (!this.#inFlight) {
      this.#inFlight = this.#fetch().finally(() => {
        this.#inFlight = null;
      });
    }
    return this.#inFlight;
  }

  /** Drops `token` after Fleet Engine refused it, so the next call fetches a new one. */
  invalidate(token) {
    if (this.#current?.token === token) this.#current = null;
  }

  async #fetch() {
    const started = Date.now();
    const { token, expiresInSeconds } = await this.#fetcher();
    if (typeof token !== "string" || !(expiresInSeconds > 0)) {
      throw new TokenFetchError(0, "The token server answered without a token.");
    }
    const lifetime = expiresInSeconds * 1000;
    const margin = Math.min(60_000, lifetime / 5);
    this.fetches += 1;
    this.#current = { token, expiresAt: started + lifetime, refreshAt: started + lifetime - margin };
    return token;
  }
}

/**
 * Calls Fleet Engine at `url` with a token from `provider`; after a 401 it drops the token and tries once more with
 * a fresh one. Resolves to the response.
 */
export async function callFleetEngine(provider, url, init = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const token = await provider.token();
    const answer = await fetch(url, {
      ...init,
      credentials: "omit",
      headers: { ...(init.headers ?? {}), Authorization: `Bearer ${token}` },
    });
    if (answer.status !== 401 || attempt > 0) return answer;
    provider.invalidate(token);
  }
}
