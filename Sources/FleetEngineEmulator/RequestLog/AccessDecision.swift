import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import Foundation
import NIOConcurrencyHelpers

/// Why a call was allowed or refused, as the request log records it under `jsonPayload.fleetauthDecision` (a key
/// of FleetAuth's own, which Google's entries never use) and `fleetauth token verify --explain` prints it.
///
/// It is worked out from the same facts the checks used (the verifier's reason, the signing account, the token's
/// claims, the resource the call names), never from the token's signature, which no decision contains.
struct AccessDecision: Sendable, Equatable {
    /// `ALLOWED` or `REFUSED`.
    enum Outcome: String, Sendable {
        case allowed = "ALLOWED"
        case refused = "REFUSED"
    }

    /// The step that decided: `credentials` (no bearer token), `token` (the verifier's rules), `scopes` (no
    /// `authorization` claim), `role`, `claims`, `provider`, or `request` (the call passed authorization and failed
    /// for another reason).
    var outcome: Outcome
    var check: String
    /// The verifier's stable reason code (`expired`), for a refused token.
    var reason: String?
    /// One sentence a developer can act on.
    var explanation: String
    /// The signing service account and its roles, when the token was verified or its issuer is known.
    var account: String?
    var roles: [String] = []
    /// The permission the RPC needs, when the method's check ran.
    var permission: String?
    /// The token's claims as decoded (header and signature left out).
    var claims: JSONObject?

    var jsonObject: JSONObject {
        var object = JSONObject()
        object["outcome"] = .string(outcome.rawValue)
        object["check"] = .string(check)
        if let reason { object["reason"] = .string(reason) }
        object["explanation"] = .string(explanation)
        if let account { object["account"] = .string(account) }
        if !roles.isEmpty { object["roles"] = .array(roles.map(JSONValue.string)) }
        if let permission { object["permission"] = .string(permission) }
        if let claims { object["claims"] = .object(claims) }
        return object
    }
}

extension AccessDecision {
    /// The decision for a call whose token the verifier refused with `reason`, judged at `now`; `claims` are the
    /// token's claims decoded without verification, when it could be decoded at all.
    static func refusedToken(reason: String?, claims: JSONObject?, now: Date, account: TrustedServiceAccount?) -> Self {
        guard let reason else {
            return Self(
                outcome: .refused,
                check: "credentials",
                explanation:
                    "The call has no `Authorization: Bearer <JWT>` header; mint a token for the app's role and send it."
            )
        }
        let explanation: String
        let nowSeconds = Int64(now.timeIntervalSince1970.rounded(.down))
        func time(_ key: String) -> (Int64, String)? {
            guard let seconds = claims?[key]?.integerValue else { return nil }
            return (seconds, RFC3339.format(Date(timeIntervalSince1970: TimeInterval(seconds))))
        }
        let clock = "the emulator's clock reads \(RFC3339.format(now)) (\(nowSeconds))"
        switch reason {
        case "expired":
            let exp = time("exp")
            explanation =
                "The token expired at \(exp?.1 ?? "its exp") (exp \(exp.map { String($0.0) } ?? "?")) and \(clock), \(exp.map { String(nowSeconds - $0.0) } ?? "?") s later; fetch a fresh token before the old one's exp."
        case "issued_in_future", "not_yet_valid":
            let iat = time(reason == "issued_in_future" ? "iat" : "nbf")
            explanation =
                "The token says it was issued at \(iat?.1 ?? "a time") ahead of the allowed skew, and \(clock); check the token server's clock."
        case "expiration_too_far", "invalid_lifetime":
            explanation =
                "The token is valid for more than one hour (iat \(time("iat").map { String($0.0) } ?? "?"), exp \(time("exp").map { String($0.0) } ?? "?")); Fleet Engine takes tokens of at most one hour."
        case "unknown_issuer":
            explanation =
                "The token's issuer \(claims?["iss"]?.stringValue ?? "") is not a service account the emulator trusts; add it to the trust file or sign with a trusted account."
        case "unknown_kid":
            explanation =
                "The token names a key ID its issuer does not have; the key was rotated or the token was signed with another account's key."
        case "invalid_signature":
            explanation =
                "The token's signature does not verify under its issuer's key \(account.map { "(\($0.email))" } ?? ""); it was signed with another key or altered."
        case "invalid_audience":
            explanation =
                "The token's aud is \(claims?["aud"].map { $0.stringValue ?? $0.typeName } ?? "missing"), not https://fleetengine.googleapis.com/."
        case "missing_authorization":
            explanation =
                "The token has no authorization claim (JWT does not contain any scopes); mint it with the vehicle, trip, delivery vehicle or task it acts on."
        default:
            explanation = "The token was refused (\(reason)): it breaks one of Fleet Engine's token rules."
        }
        return Self(
            outcome: .refused,
            check: reason == "missing_authorization" ? "scopes" : "token",
            reason: reason,
            explanation: explanation,
            account: account?.email ?? claims?["iss"]?.stringValue,
            roles: account?.roles.map(\.id) ?? [],
            claims: claims
        )
    }

    /// The decision of an authenticated call that ran `checks` and ended with `error` (nil when it succeeded).
    static func checked(_ checks: [AccessCheck], caller: Principal, error: GoogleAPIError?) -> Self {
        let account = caller.account
        let claims = caller.token.claimsObject
        var decision = Self(
            outcome: .allowed,
            check: "request",
            explanation: "",
            account: account.email,
            roles: account.roles.map(\.id),
            claims: claims
        )
        let roles = account.roles.map(\.id).joined(separator: ", ")
        var allowed: [String] = []
        for check in checks {
            let permission = check.method.permission
            decision.permission = permission.name
            guard account.isGranted(permission) else {
                decision.outcome = .refused
                decision.check = "role"
                decision.explanation =
                    "\(check.method.name) needs permission \(permission), which no role of \(account.email) (\(roles)) grants; sign with an account whose role grants it."
                return decision
            }
            guard let scope = check.scope, let provider = check.provider else {
                allowed.append("\(roles) grants \(permission)")
                continue
            }
            let held = caller.claims.jsonObject.map { "\($0.key)=\($0.value.jsonText)" }.joined(separator: ", ")
            if account.ignoresClaims(for: permission) {
                allowed.append("\(roles) grants \(permission) and ignores the token's claims")
            } else if AccessPolicy.covers(caller.claims, scope) {
                allowed.append("\(roles) grants \(permission), and the claims (\(held)) cover \(scope)")
            } else {
                decision.outcome = .refused
                decision.check = "claims"
                decision.explanation =
                    "The token's authorization claims (\(held.isEmpty ? "none" : held)) do not cover \(scope), which \(check.method.name) names; mint the token for that resource."
                return decision
            }
            guard provider.hasSameBytes(as: account.project) else {
                decision.outcome = .refused
                decision.check = "provider"
                decision.explanation =
                    "The call names provider \(provider), but \(account.email) belongs to project \(account.project); call providers/\(account.project) or sign with that provider's account."
                return decision
            }
        }
        if let error {
            let authorized = allowed.isEmpty ? "" : "Authorized (\(allowed.joined(separator: "; "))); "
            if error.code == .permissionDenied || error.code == .unauthenticated {
                decision.outcome = .refused
                decision.check = "claims"
                decision.explanation = authorized + "then refused: \(error.message)"
            } else {
                decision.explanation = authorized + "the call then failed on its own terms: \(error.message)"
            }
            return decision
        }
        decision.check = checks.isEmpty ? "request" : "policy"
        decision.explanation =
            allowed.isEmpty ? "Allowed: the token verified." : "Allowed: " + allowed.joined(separator: "; ") + "."
        return decision
    }
}

/// The decisions of the accepted calls the request log's writer has seen, with their JSON text: a driver app's
/// updates all carry one token and make the same checks, so they share one decision, worked out once. It forgets
/// everything past ``limit`` keys.
final class DecisionMemo: Sendable {
    /// What an accepted call's decision depends on: the signing account (its roles included), the token's claims,
    /// and the checks the call made.
    private struct Key: Hashable {
        let account: TrustedServiceAccount
        let claims: JSONObject
        let checks: [AccessCheck]
    }

    private let known = NIOLockedValueBox<[Key: (object: JSONObject, json: [UInt8])]>([:])
    let limit: Int

    init(limit: Int = 4096) { self.limit = limit }

    /// The decision of `record` and its JSON text, from `make` the first time; a refused or failed call's decision
    /// depends on more (the clock, the error), so it is made each time and its text written with the entry.
    func decision(of record: RequestLogRecord, make: () -> JSONObject) -> (object: JSONObject, json: [UInt8]?) {
        guard let caller = record.caller, record.error == nil else { return (make(), nil) }
        let key = Key(account: caller.account, claims: caller.token.claimsObject, checks: record.accessChecks)
        if let found = known.withLockedValue({ $0[key] }) { return found }
        let object = make()
        let made = (object: object, json: object.jsonBytes)
        known.withLockedValue { known in
            if known.count >= limit { known.removeAll(keepingCapacity: true) }
            known[key] = made
        }
        return made
    }
}
