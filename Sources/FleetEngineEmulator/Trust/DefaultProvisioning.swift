public import FleetAuthCore
public import FleetAuthJWT
import FleetAuthServerCore
import Foundation

/// The zero-configuration start: one service account per Fleet Engine role, with key files in a data directory,
/// all in one provider (project). Existing key files are reused, so restarting keeps the same identities.
public enum DefaultProvisioning {
    /// One provisioned account.
    public struct Account: Sendable {
        /// The account's role.
        public let role: FleetEngineRole
        /// Where its key file is.
        public let keyPath: String
        /// The key.
        public let key: ServiceAccountKey

        /// A `fleetauth token mint` command line for a typical token of this role.
        public var mintCommand: String {
            "fleetauth token mint --key \(keyPath) --type \(DefaultProvisioning.typicalTokenType(for: role))"
        }
    }

    /// The service-account name used for a role: `driverSdkUser` → `driver-sdk-user`.
    public static func accountName(for role: FleetEngineRole) -> String {
        var name = ""
        for character in role.id.replacingOccurrences(of: "roles/fleetengine.", with: "") {
            if character.isUppercase { name.append("-") }
            name += character.lowercased()
        }
        return name
    }

    /// The token type (and IDs) a role's tokens are usually minted with, as `fleetauth token mint` options.
    public static func typicalTokenType(for role: FleetEngineRole) -> String {
        switch role {
        case .consumerSdkUser: "consumer --trip TRIP_ID"
        case .driverSdkUser: "driver --vehicle VEHICLE_ID"
        case .serviceSuperUser, .ondemandAdmin: "server"
        case .deliveryConsumer: "delivery_consumer --tracking TRACKING_ID"
        case .deliveryUntrustedDriver: "untrusted_delivery_driver --delivery-vehicle DELIVERY_VEHICLE_ID"
        case .deliveryTrustedDriver: "trusted_delivery_driver --delivery-vehicle DELIVERY_VEHICLE_ID"
        case .deliveryFleetReader: "delivery_fleet_reader"
        case .deliverySuperUser, .deliveryAdmin: "delivery_server"
        default: "fleet_reader"
        }
    }

    /// The trust file's name in the data directory.
    public static let trustFileName = "trust.json"

    /// Creates (or reuses) `<dataDirectory>/keys/<role>.json` for every role and writes `<dataDirectory>/trust.json`
    /// trusting them by key file.
    public static func provision(dataDirectory: String, project: String = "demo-project") throws -> [Account] {
        let keys = dataDirectory + "/keys"
        try PrivateFiles.directory(keys)
        var accounts: [Account] = []
        var trust = TrustConfiguration(serviceAccounts: [])
        for role in FleetEngineRole.all {
            let name = accountName(for: role)
            let path = "\(keys)/\(name).json"
            let key: ServiceAccountKey
            if FileManager.default.fileExists(atPath: path) {
                key = try ServiceAccountKey(contentsOf: path)
            } else {
                key = try ServiceAccountKey.generate(projectID: project, name: name)
                try key.write(to: path)
            }
            accounts.append(Account(role: role, keyPath: path, key: key))
            trust.serviceAccounts.append(
                .init(
                    account: TrustedServiceAccount(email: key.clientEmail, project: key.projectID, roles: [role]),
                    keySource: .keyFile("keys/\(name).json")
                )
            )
        }
        try trust.write(to: dataDirectory + "/" + trustFileName)
        return accounts
    }
}
