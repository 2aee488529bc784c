import FleetAuthCore

/// The header rules every token must pass before any key is looked up (<doc:VerificationRules>, H1–H10).
///
/// Policy choices, written down once:
/// - `alg` must be exactly the string `RS256`: an allowlist of one, case-sensitive (H1–H4).
/// - `typ`, when present, must be `JWT`, compared case-insensitively (RFC 7519 §5.1; H9).
/// - `kid`, when present, must be a string of 1–256 printable ASCII characters (H5, J7). A token **without**
///   `kid` is accepted and tried against every key of its issuer, because Google's Java library signs through
///   IAM `signBlob` without one (the core module's *Fleet Engine tokens* article).
/// - `jwk`, `jku`, `x5u`, `x5c`, `x5t`, `x5t#S256` refuse the token outright: keys come only from trust
///   configuration, never from the token (H7).
/// - `crit` refuses the token, in any form: FleetAuth understands no extension (H8).
/// - `cty` (nested JWTs), `b64` (RFC 7797 unencoded payloads) and JWE parameters (`enc`, `zip`, `epk`, `apu`, `apv`,
///   `p2s`, `p2c`, `iv`, `tag`) refuse the token (H9, H10).
/// - Any other parameter is ignored, as RFC 7515 §4 requires of parameters a recipient does not understand.
enum JWSHeaderPolicy {
    static let maximumKeyIDLength = 256

    /// Checks `header` and returns its `kid`, if any. `algorithms` is the allowlist for `alg`: `RS256` alone for
    /// Fleet Engine tokens; ID tokens also allow `ES256`.
    static func check(
        _ header: JSONObject,
        algorithms: [String] = ["RS256"]
    ) throws(TokenVerificationError) -> String? {
        var keyID: String?
        var sawAlgorithm = false
        for member in header {
            switch member.key {
            case "alg":
                guard case .string(let algorithm) = member.value else {
                    throw .unsupportedAlgorithm("a \(member.value.typeName)", allowed: algorithms)
                }
                guard algorithms.contains(where: { $0.hasSameBytes(as: algorithm) }) else {
                    throw .unsupportedAlgorithm(TokenVerificationError.quoted(algorithm), allowed: algorithms)
                }
                sawAlgorithm = true
            case "typ":
                guard case .string(let type) = member.value else { throw .invalidType("a \(member.value.typeName)") }
                guard type == "JWT" || (type.utf8.count == 3 && type.lowercased() == "jwt") else {
                    throw .invalidType(TokenVerificationError.quoted(type))
                }
            case "kid":
                guard case .string(let kid) = member.value else {
                    throw .invalidKeyID("must be a string, not a \(member.value.typeName)")
                }
                guard !kid.isEmpty, kid.utf8.count <= maximumKeyIDLength else {
                    throw .invalidKeyID("must have 1 to \(maximumKeyIDLength) characters")
                }
                var bytes = kid
                guard bytes.withUTF8({ $0.allSatisfy { $0 >= 0x21 && $0 <= 0x7E } }) else {
                    throw .invalidKeyID("must be printable ASCII without spaces")
                }
                keyID = kid
            case "jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256":
                throw .untrustedKeyReference(member.key)
            case "crit":
                throw .criticalHeader
            case "cty", "b64", "enc", "zip", "epk", "apu", "apv", "p2s", "p2c", "iv", "tag":
                throw .forbiddenHeader(member.key)
            default:
                continue
            }
        }
        guard sawAlgorithm else { throw .unsupportedAlgorithm("missing", allowed: algorithms) }
        return keyID
    }

    /// Decodes `token` strictly and maps decoding problems to reason codes.
    static func decode(_ token: String, maximumLength: Int) throws(TokenVerificationError) -> CompactJWS {
        do {
            return try CompactJWS(token, maximumLength: maximumLength)
        } catch {
            switch error.code {
            case .tooLarge: throw .tokenTooLarge(token.utf8.count, limit: maximumLength)
            case .invalidBase64URL: throw .invalidBase64URL(error.message)
            case .invalidHeader:
                if error.jsonError?.code == .duplicateKey {
                    throw .duplicateJSONKey("header", error.jsonError!.message)
                }
                throw .invalidJSON("header", error.jsonError?.message ?? error.message)
            default: throw .malformedToken(error.message)
            }
        }
    }

    /// The payload as a strict JSON object (the claims), or the reason it is not one.
    static func payload(of jws: CompactJWS) throws(TokenVerificationError) -> JSONObject {
        do {
            return try jws.payloadObject()
        } catch {
            if error.code == .duplicateKey { throw .duplicateJSONKey("payload", error.message) }
            throw .invalidJSON("payload", error.message)
        }
    }

    /// Verifies the signature with the key named by `keyID`, or with each candidate when there is no `kid`.
    static func verifySignature(
        of jws: CompactJWS,
        keyID: String?,
        candidates: [RSAVerificationKey]
    ) throws(TokenVerificationError) -> RSAVerificationKey {
        if let keyID {
            guard let key = candidates.first(where: { $0.keyID == keyID }) else { throw .unknownKeyID(keyID) }
            guard jws.withSigningInput({ key.isValidRS256Signature(jws.signature, for: $0) }) else {
                throw .invalidSignature
            }
            return key
        }
        for key in candidates where key.modulusByteCount == jws.signature.count {
            if jws.withSigningInput({ key.isValidRS256Signature(jws.signature, for: $0) }) {
                return key
            }
        }
        throw .invalidSignature
    }
}
