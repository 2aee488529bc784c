import ArgumentParser
import FleetAuthCore
import FleetAuthIAM
import FleetAuthJWT
import FleetEngineEmulator
import FleetTokenServer
import Foundation

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint, inspect and verify Fleet Engine JWTs.",
        subcommands: [Mint.self, Inspect.self, Verify.self]
    )

    static let typeNames = [
        "server", "driver", "consumer", "delivery_server", "delivery_consumer", "untrusted_delivery_driver",
        "trusted_delivery_driver", "delivery_fleet_reader", "fleet_reader", "custom",
    ]

    struct Mint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mint a Fleet Engine JWT signed with a service-account key.",
            discussion: """
                Token types and the IDs they take:
                  server, delivery_server, delivery_fleet_reader, fleet_reader   (no IDs; wildcard claims)
                  driver --vehicle V              consumer --trip T
                  delivery_consumer --task T | --tracking T
                  untrusted_delivery_driver --delivery-vehicle D
                  trusted_delivery_driver --delivery-vehicle D [--task T]
                  custom  any of --vehicle --trip --delivery-vehicle --task --task-ids --tracking
                """
        )

        @Option(help: "Service-account key file. Default: $GOOGLE_APPLICATION_CREDENTIALS.")
        var key: String?
        @Option(
            help: """
                Sign without a key file: iam (IAM signJwt with Application Default Credentials) or pkcs11:URI (a key \
                in an HSM or Cloud KMS). Needs --service-account.
                """
        )
        var signer: String?
        @Option(help: "The service account a --signer signs as.") var serviceAccount: String?
        @Option(help: "The kid of a pkcs11 signer's tokens (default: the key's RFC 7638 thumbprint).") var keyID:
            String?
        @Option(help: "The IAM Credentials API base URL.")
        var iamCredentialsURL: String = IAMCredentialsSigner.Configuration.googleBaseURL
        @Option(
            help: """
                Where Google publishes service accounts' public keys: a token IAM signs is checked against \
                URL/service_accounts/v1/metadata/jwk/EMAIL before it is printed (default https://www.googleapis.com).
                """
        )
        var googleKeysURL: String = KeylessSigner.googleKeysURL

        @Option(name: .customLong("type"), help: "Token type: \(TokenCommand.typeNames.joined(separator: ", ")).")
        var tokenType: String

        @Option(name: [.customLong("vehicle"), .customLong("vehicle-id")], help: "Vehicle ID (vehicleid claim).")
        var vehicle: String?
        @Option(name: [.customLong("trip"), .customLong("trip-id")], help: "Trip ID (tripid claim).")
        var trip: String?
        @Option(
            name: [.customLong("delivery-vehicle"), .customLong("delivery-vehicle-id")],
            help: "Delivery vehicle ID (deliveryvehicleid claim)."
        )
        var deliveryVehicle: String?
        @Option(name: [.customLong("task"), .customLong("task-id")], help: "Task ID (taskid claim).")
        var task: String?
        @Option(name: .customLong("task-ids"), help: "Comma-separated task IDs (taskids claim; custom only).")
        var taskIDs: String?
        @Option(name: [.customLong("tracking"), .customLong("tracking-id")], help: "Tracking ID (trackingid claim).")
        var tracking: String?

        @Option(help: "Lifetime in seconds, exp − iat (1–3600).") var lifetime: Int64 = 3600
        @Option(help: "Seconds to backdate iat by (0–600).") var backdate: Int64 = 0
        @Option(help: "The aud claim.") var audience: String = FleetEngineClaims.fleetEngineAudience
        @Option(help: "Mint as of this time, in seconds since the Unix epoch. Default: now.") var now: Int64?
        @Flag(help: "Print the token endpoint's JSON instead of the bare JWT.") var json = false

        func validate() throws {
            _ = try tokenTypeFromOptions()
            if let signer {
                guard signer == "iam" || signer.hasPrefix("pkcs11:") else {
                    throw ValidationError("--signer must be iam or pkcs11:URI.")
                }
                guard serviceAccount != nil else { throw ValidationError("--signer needs --service-account EMAIL.") }
                if key != nil { throw ValidationError("--key and --signer exclude each other.") }
            } else if serviceAccount != nil || keyID != nil {
                throw ValidationError("--service-account and --key-id go with --signer.")
            }
            if keyID != nil, signer == "iam" { throw ValidationError("--key-id applies to a pkcs11 signer only.") }
        }

        func run() async throws {
            let type = try tokenTypeFromOptions()
            let tokenSigner: any TokenSigner
            if let signer, let serviceAccount {
                var accessTokens: AccessTokenSource?
                tokenSigner = try await KeylessSignerOptions.signer(
                    kind: signer,
                    email: serviceAccount,
                    keyID: keyID,
                    iamCredentialsURL: iamCredentialsURL,
                    googleKeysURL: googleKeysURL,
                    environment: nil,
                    accessTokens: &accessTokens,
                    family: "--signer"
                ).signer
            } else {
                tokenSigner = LocalKeySigner(key: try loadKey(key))
            }
            let minter: FleetEngineTokenMinter
            do {
                minter = try FleetEngineTokenMinter(
                    signer: tokenSigner,
                    configuration: .init(audience: audience, lifetime: lifetime, backdate: backdate)
                )
            } catch {
                throw CLIError(error.message)
            }
            let date = now.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? Date()
            let token: FleetEngineToken
            do {
                token = try await minter.mint(type, now: date)
            } catch let error as SigningError {
                throw CLIError(error.message)
            }
            if json {
                let response = token.endpointResponse(now: Int64(date.timeIntervalSince1970.rounded(.down)))
                print(JSONValue.object(response.jsonObject).prettyText())
            } else {
                print(token.jwt)
            }
        }

        func tokenTypeFromOptions() throws -> FleetEngineTokenType {
            // "delivery_server", "delivery-server", "deliveryServer" and the Java enum's "DELIVERY_SERVER" all work.
            let key = tokenType.lowercased().filter { $0 != "_" && $0 != "-" }
            let name = TokenCommand.typeNames.first { $0.replacingOccurrences(of: "_", with: "") == key } ?? tokenType
            let given: [(String, String?)] = [
                ("--vehicle", vehicle), ("--trip", trip), ("--delivery-vehicle", deliveryVehicle), ("--task", task),
                ("--task-ids", taskIDs), ("--tracking", tracking),
            ]
            func only(_ allowed: Set<String>) throws {
                for (flag, value) in given where value != nil && !allowed.contains(flag) {
                    throw ValidationError("\(flag) does not apply to --type \(name).")
                }
            }
            func require(_ value: String?, _ flag: String) throws -> String {
                guard let value else { throw ValidationError("--type \(name) needs \(flag).") }
                return value
            }
            do {
                switch name {
                case "server": try only([]); return .server
                case "delivery_server": try only([]); return .deliveryServer
                case "delivery_fleet_reader": try only([]); return .deliveryFleetReader
                case "fleet_reader": try only([]); return .fleetReader
                case "driver":
                    try only(["--vehicle"])
                    return try .driver(vehicleID: require(vehicle, "--vehicle"))
                case "consumer":
                    try only(["--trip"])
                    return try .consumer(tripID: require(trip, "--trip"))
                case "delivery_consumer":
                    try only(["--task", "--tracking"])
                    switch (task, tracking) {
                    case (let task?, nil): return try .deliveryConsumer(taskID: task)
                    case (nil, let tracking?): return try .deliveryConsumer(trackingID: tracking)
                    default:
                        throw ValidationError("--type delivery_consumer needs exactly one of --task and --tracking.")
                    }
                case "untrusted_delivery_driver":
                    try only(["--delivery-vehicle"])
                    return try .untrustedDeliveryDriver(
                        deliveryVehicleID: require(deliveryVehicle, "--delivery-vehicle")
                    )
                case "trusted_delivery_driver":
                    try only(["--delivery-vehicle", "--task"])
                    return try .trustedDeliveryDriver(
                        deliveryVehicleID: require(deliveryVehicle, "--delivery-vehicle"),
                        taskID: task
                    )
                case "custom":
                    let claims = AuthorizationClaims(
                        vehicleID: vehicle,
                        tripID: trip,
                        deliveryVehicleID: deliveryVehicle,
                        taskID: task,
                        taskIDs: taskIDs.map {
                            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                        },
                        trackingID: tracking
                    )
                    if claims.isEmpty {
                        throw ValidationError(
                            "--type custom needs at least one of --vehicle --trip --delivery-vehicle --task --task-ids --tracking."
                        )
                    }
                    return try .custom(claims)
                default:
                    throw ValidationError(
                        "Unknown token type \"\(tokenType)\"; use one of \(TokenCommand.typeNames.joined(separator: ", "))."
                    )
                }
            } catch let error as FleetEngineIDError {
                throw ValidationError("Invalid ID: \(error).")
            } catch let error as AuthorizationClaimsError {
                throw ValidationError(error.message)
            }
        }
    }

    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a JWT's header, claims and time to expiry, without verifying it."
        )

        @Argument(help: "The JWT. Default: read from standard input.") var jwt: String?
        @Option(help: "Take this as the current time, in seconds since the Unix epoch.") var now: Int64?
        @Flag(help: "Print one JSON object instead of text.") var json = false

        func run() async throws {
            let text = try jwt ?? readToken()
            let jws: CompactJWS
            do {
                jws = try CompactJWS(text)
            } catch {
                throw CLIError("not a compact JWS: \(error.message)")
            }
            let payload: JSONValue
            do {
                payload = .object(try jws.payloadObject())
            } catch {
                throw CLIError("the payload is not a strict JSON object: \(error.message)")
            }
            let current = now ?? Int64(Date().timeIntervalSince1970.rounded(.down))
            let claims = payload.objectValue!
            if json {
                var object = JSONObject()
                object["header"] = .object(jws.header)
                object["claims"] = payload
                if let exp = claims["exp"]?.integerValue { object["expiresInSeconds"] = .integer(exp - current) }
                object["verified"] = false
                print(JSONValue.object(object).prettyText())
                return
            }
            print("header:")
            print(JSONValue.object(jws.header).prettyText())
            print("claims:")
            print(payload.prettyText())
            if let iat = claims["iat"]?.integerValue {
                print("issued:    \(iso8601(iat)) (iat \(iat), \(describe(current - iat)) ago)")
            }
            if let exp = claims["exp"]?.integerValue {
                let remaining = exp - current
                let state = remaining > 0 ? "expires in \(describe(remaining))" : "expired \(describe(-remaining)) ago"
                print("expires:   \(iso8601(exp)) (exp \(exp), \(state))")
            }
            print("signature: \(jws.signature.count) bytes, NOT verified (use `fleetauth token verify`)")
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify JWTs as Fleet Engine does; print VALID <claims json> or INVALID <reason-code>.",
            discussion: """
                Trust comes from service-account key files (--key: the key's email is the only issuer it \
                verifies) or JWK sets (--jwks: bound to --issuer when given, otherwise to any issuer). The exit \
                status is 0 whenever verification ran, whatever the verdicts; reason codes are listed in the \
                FleetAuthJWT documentation of TokenVerificationError.

                --explain judges one call as the local Fleet Engine would, offline: the token, the trust file that \
                gives each account its roles (--trust, as the emulator reads it), the RPC and the resource it names. \
                It prints ALLOWED or REFUSED, the check that decided (token, scopes, role, claims, provider, \
                policy) and a sentence saying why — the decision the emulator's request log writes for the same call.
                """
        )

        @Option(name: .customLong("key"), help: "Trust this service-account key file (repeatable).")
        var keys: [String] = []
        @Option(name: .customLong("jwks"), help: "Trust the keys of this JWK set file (repeatable).")
        var jwksFiles: [String] = []
        @Option(help: "Bind the --jwks keys to this service-account email.") var issuer: String?
        @Option(help: "Verify as of this time, in seconds since the Unix epoch. Default: now.") var now: Int64?
        @Option(help: "The expected aud.") var audience: String = FleetEngineClaims.fleetEngineAudience
        @Flag(help: "Read one token per line from standard input; print one verdict per line.") var batch = false
        @Argument(help: "The JWT. Default: read from standard input.") var jwt: String?
        @Flag(help: "Judge one call (--rpc, --resource) as the local Fleet Engine would, and say why.")
        var explain = false
        @Option(help: "With --explain: the trust file giving each account its roles (the emulator's trust.json).")
        var trust: String?
        @Option(help: "With --explain: the RPC, such as UpdateVehicle.") var rpc: String?
        @Option(help: "With --explain: the resource the call names, such as providers/p/vehicles/v1.")
        var resource: String?
        @Option(help: "With --explain: an update's field mask (comma-separated; default last_location).")
        var updateMask: String?
        @Option(help: "With --explain: the vehicle the named trip or task is assigned to.") var assignedVehicle: String?
        @Flag(help: "With --explain: print the decision as one JSON object.") var json = false

        func validate() throws {
            if explain {
                guard trust != nil, rpc != nil, resource != nil else {
                    throw ValidationError("--explain needs --trust, --rpc and --resource.")
                }
                if batch { throw ValidationError("--explain judges one token; it cannot --batch.") }
                return
            }
            if keys.isEmpty && jwksFiles.isEmpty { throw ValidationError("Name a --key or a --jwks file to trust.") }
            if batch && jwt != nil {
                throw ValidationError("--batch reads tokens from standard input; give no JWT argument.")
            }
        }

        func run() async throws {
            if explain { return try await explainCall() }
            var store = TrustStore()
            for path in keys {
                let key = try loadKey(path)
                store.add(key.verificationKey, issuer: key.clientEmail)
            }
            for path in jwksFiles {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CLIError("\(path): no such JWK set file, or it cannot be read")
                }
                let keys: [RSAVerificationKey]
                do {
                    keys = try JSONWebKeySet(json: Array(data)).verificationKeys()
                } catch {
                    throw CLIError("\(path): \(error.message)")
                }
                if let issuer { store.add(keys, issuer: issuer) } else { store.addForAnyIssuer(keys) }
            }
            let verifier = FleetEngineTokenVerifier(trustStore: store, policy: .init(audience: audience))
            func verdict(_ token: Substring) -> String {
                let current = now ?? Int64(Date().timeIntervalSince1970.rounded(.down))
                do {
                    let verified = try verifier.verify(token, nowSeconds: current)
                    return "VALID \(verified.claimsObject.jsonText)"
                } catch {
                    return "INVALID \(error.code.rawValue)"
                }
            }
            if batch {
                while let line = readLine(strippingNewline: true) {
                    print(verdict(line.hasSuffix("\r") ? line.dropLast() : Substring(line)))
                }
            } else {
                print(verdict(Substring(try jwt ?? readToken())))
            }
        }
    }
}

extension TokenCommand.Verify {
    /// `--explain`: the emulator's decision for one call, offline.
    func explainCall() async throws {
        guard let trust, let rpc, let resource else { return }
        let accounts: [(TrustedServiceAccount, [RSAVerificationKey])]
        do {
            accounts = try await TrustConfiguration(contentsOf: trust).loadAccounts()
        } catch {
            throw CLIError("\(trust): \(error)")
        }
        let token = try jwt ?? readToken()
        let judged = Result { () throws(GoogleAPIError) -> JSONObject in
            try AccessExplanation.explain(
                token: token,
                rpc: rpc,
                resource: resource,
                updateMask: updateMask.map { $0.split(separator: ",").map(String.init) } ?? [],
                assignedVehicle: assignedVehicle,
                accounts: accounts,
                now: now.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? Date()
            )
        }
        let decision: JSONObject
        switch judged {
        case .success(let value): decision = value
        case .failure(let error): throw CLIError(error.message)
        }
        if json {
            print(decision.jsonText)
            return
        }
        let outcome = decision["outcome"]?.stringValue ?? "?"
        print("\(outcome) (\(decision["check"]?.stringValue ?? "?")): \(decision["explanation"]?.stringValue ?? "")")
        if let account = decision["account"]?.stringValue {
            let roles = decision["roles"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
            print("account: \(account)" + (roles.isEmpty ? "" : " (\(roles))"))
        }
        if let permission = decision["permission"]?.stringValue { print("permission: \(permission)") }
        if let claims = decision["claims"]?.objectValue { print("claims: \(claims.jsonText)") }
    }
}

/// Reads one token from standard input, trimming surrounding whitespace.
func readToken() throws -> String {
    var text = ""
    while let line = readLine(strippingNewline: false) {
        text += line
    }
    let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if token.isEmpty { throw CLIError("no token given: pass it as an argument or on standard input") }
    return token
}

func iso8601(_ seconds: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}

func describe(_ seconds: Int64) -> String {
    let value = abs(seconds)
    if value < 60 { return "\(value) s" }
    if value < 3600 { return "\(value / 60) min \(value % 60) s" }
    return "\(value / 3600) h \(value % 3600 / 60) min"
}
