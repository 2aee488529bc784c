import FleetAuthCore
import FleetAuthJWT
import FleetAuthServerCore
import FleetAuthServerSupport
import Foundation
import HTTPTypes
import Hummingbird

/// The HTTP routes of ``LocalIAM``, served on a loopback listener of their own.
struct IAMRoutes: Sendable {
    let iam: LocalIAM
    let maximumBodySize: Int

    func register<Context: RequestContext>(on router: Router<Context>) {
        let metadata = "computeMetadata/v1/instance/service-accounts/default"
        router.get("\(metadata)/token") { request, _ in
            try Self.requireMetadataFlavor(request)
            let (token, expiresIn) = await iam.issueAccessToken()
            return Self.metadataJSON([
                "access_token": .string(token), "expires_in": .integer(expiresIn), "token_type": "Bearer",
            ])
        }
        router.get("\(metadata)/email") { request, _ in
            try Self.requireMetadataFlavor(request)
            return Response(
                status: .ok,
                headers: [.contentType: "application/text", Self.metadataFlavor: "Google"],
                body: .init(byteBuffer: ByteBuffer(string: iam.runtimeServiceAccount))
            )
        }
        router.get("\(metadata)") { request, _ in
            try Self.requireMetadataFlavor(request)
            return Self.metadataJSON([
                "aliases": ["default"], "email": .string(iam.runtimeServiceAccount),
                "scopes": [.string("https://www.googleapis.com/auth/cloud-platform")],
            ])
        }
        router.post("v1/projects/-/serviceAccounts/{email}:signJwt") { request, context in
            let (key, body) = try await authorize(request, context, permission: "iam.serviceAccounts.signJwt")
            return try Self.signJwt(key, body, now: iam.clock.currentEpochSeconds)
        }
        router.post("v1/projects/-/serviceAccounts/{email}:signBlob") { request, context in
            let (key, body) = try await authorize(request, context, permission: "iam.serviceAccounts.signBlob")
            let payload = try JSONRequestBody.string(body, "payload")
            guard let bytes = Data(base64Encoded: payload) else {
                throw GoogleAPIError.invalidArgument("payload must be base64.")
            }
            guard bytes.count <= LocalIAM.maximumPayloadSize else {
                throw GoogleAPIError.invalidArgument(
                    "payload is \(bytes.count) bytes; this stand-in signs at most \(LocalIAM.maximumPayloadSize)."
                )
            }
            let signature = try LocalKeySigner(key: key).signSynchronously(Array(bytes))
            return JSONResponse.make([
                "keyId": .string(key.privateKeyID), "signedBlob": .string(Data(signature).base64EncodedString()),
            ])
        }
        router.get("service_accounts/v1/metadata/jwk/{email}") { _, context in
            let key = try account(context)
            return JSONResponse.make(
                JSONWebKeySet([key.verificationKey]).jsonObject,
                headers: [.cacheControl: "public, max-age=60"]
            )
        }
        router.get("service_accounts/v1/metadata/x509/{email}") { _, context in
            let key = try account(context)
            let pem = iam.certificates[key.clientEmail]?.pemRepresentation ?? ""
            return JSONResponse.make(
                [key.privateKeyID: .string(pem)],
                headers: [.cacheControl: "public, max-age=60"]
            )
        }
    }

    static let metadataFlavor = HTTPField.Name("Metadata-Flavor")!

    /// The metadata server answers only requests that say `Metadata-Flavor: Google` (a browser cannot send it).
    static func requireMetadataFlavor(_ request: Request) throws {
        guard request.headers[metadataFlavor] == "Google" else {
            throw GoogleAPIError.permissionDenied("Missing Metadata-Flavor: Google header.")
        }
    }

    static func metadataJSON(_ object: JSONObject) -> Response {
        JSONResponse.make(object, headers: [metadataFlavor: "Google"])
    }

    private func account(_ context: some RequestContext) throws -> ServiceAccountKey {
        let email = context.parameters.get("email")?.removingPercentEncoding ?? ""
        guard let key = iam.keys[email] else {
            throw GoogleAPIError.notFound("Service account \(email.prefix(200)) does not exist here.")
        }
        return key
    }

    /// The bearer token must be one this server issued; the account must be granted to the runtime identity (403,
    /// IAM's answer for a missing `roles/iam.serviceAccountTokenCreator`, also for an account that does not exist).
    private func authorize(_ request: Request, _ context: some RequestContext, permission: String) async throws -> (
        ServiceAccountKey, JSONObject
    ) {
        guard let credential = RequestText.bearerCredential(request.headers[.authorization]),
            await iam.isValid(credential)
        else {
            throw GoogleAPIError.unauthenticated(
                "Request had invalid authentication credentials. Expected OAuth 2 access token."
            )
        }
        // IAM answers the same 403 whether or not the account exists, so the answer tells no caller which do.
        let email = context.parameters.get("email")?.removingPercentEncoding ?? ""
        guard iam.signableAccounts.contains(email), let key = iam.keys[email] else {
            throw GoogleAPIError.permissionDenied(
                "Permission '\(permission)' denied on resource (or it may not exist)."
            )
        }
        let limit = min(maximumBodySize, 4 * LocalIAM.maximumPayloadSize)
        let body = try await JSONRequestBody.read(request, limit: limit, field: "request")
        return (key, body)
    }

    /// `signJwt`: the payload signed as given, under Google's header `{"alg":"RS256","kid":…,"typ":"JWT"}`.
    static func signJwt(_ key: ServiceAccountKey, _ body: JSONObject, now: Int64) throws -> Response {
        let payload = try JSONRequestBody.string(body, "payload")
        guard payload.utf8.count <= LocalIAM.maximumPayloadSize else {
            throw GoogleAPIError.invalidArgument(
                "payload is \(payload.utf8.count) bytes; this stand-in signs at most \(LocalIAM.maximumPayloadSize)."
            )
        }
        let claims: JSONObject
        do {
            claims = try StrictJSONParser().parseObject(Array(payload.utf8))
        } catch {
            throw GoogleAPIError.invalidArgument("payload must be a JSON object: \(error.message)")
        }
        if let exp = claims["exp"] {
            guard let seconds = exp.integerValue else {
                throw GoogleAPIError.invalidArgument("exp must be an integer timestamp.")
            }
            guard seconds > now, seconds <= now + 12 * 3600 else {
                throw GoogleAPIError.invalidArgument(
                    "exp must not be in the past and no more than 12 hours in the future."
                )
            }
        }
        var header = JSONObject()
        header["alg"] = "RS256"
        header["kid"] = .string(key.privateKeyID)
        header["typ"] = "JWT"
        let signingInput = Base64URL.encode(header.jsonBytes) + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try LocalKeySigner(key: key).signSynchronously(Array(signingInput.utf8))
        return JSONResponse.make([
            "keyId": .string(key.privateKeyID), "signedJwt": .string(signingInput + "." + Base64URL.encode(signature)),
        ])
    }
}
