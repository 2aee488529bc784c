import FleetAuthIAM
import FleetAuthJWT
import FleetAuthServerTesting
import Foundation
import Testing

@Suite("Application Default Credentials: Google's lookup order")
struct ApplicationDefaultCredentialsTests {
    let directory = NSTemporaryDirectory() + "fleetauth-adc-" + UUID().uuidString

    func write(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let authorizedUser = #"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r"}"#

    @Test("GOOGLE_APPLICATION_CREDENTIALS comes first, then gcloud's file, then the metadata server")
    func order() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = try TestKeys.keyNow(projectID: "p", name: "adc")
        let keyPath = directory + "/key.json"
        try FileManager.default.createDirectory(atPath: directory + "/gcloud", withIntermediateDirectories: true)
        try key.write(to: keyPath)
        _ = try write("gcloud/application_default_credentials.json", Self.authorizedUser)
        let both = ["GOOGLE_APPLICATION_CREDENTIALS": keyPath, "CLOUDSDK_CONFIG": directory + "/gcloud"]
        guard case .serviceAccount(let found) = try GoogleCredentials.applicationDefault(environment: both) else {
            Issue.record("expected the service-account file")
            return
        }
        #expect(found.clientEmail == key.clientEmail)
        let gcloud = try GoogleCredentials.applicationDefault(environment: ["CLOUDSDK_CONFIG": directory + "/gcloud"])
        guard case .authorizedUser(let clientID, _, let refreshToken, let tokenURI) = gcloud else {
            Issue.record("expected gcloud's authorized-user file")
            return
        }
        #expect(clientID == "c" && refreshToken == "r" && tokenURI == GoogleCredentials.googleTokenURI)
        try FileManager.default.createDirectory(atPath: directory + "/home/.config", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: directory + "/gcloud", toPath: directory + "/home/.config/gcloud")
        guard
            case .authorizedUser = try GoogleCredentials.applicationDefault(environment: ["HOME": directory + "/home"])
        else {
            Issue.record("expected ~/.config/gcloud's file")
            return
        }
        guard
            case .metadataServer(let host) = try GoogleCredentials.applicationDefault(
                environment: ["GCE_METADATA_HOST": "127.0.0.1:1"])
        else {
            Issue.record("expected the metadata server")
            return
        }
        #expect(host == "127.0.0.1:1")
        guard case .metadataServer(let defaultHost) = try GoogleCredentials.applicationDefault(environment: [:]) else {
            Issue.record("expected the metadata server")
            return
        }
        #expect(defaultHost == "metadata.google.internal")
    }

    @Test("an impersonated_service_account file names its source credentials and the account")
    func impersonated() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url =
            "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken"
        let path = try write(
            "impersonated.json",
            #"{"type":"impersonated_service_account","service_account_impersonation_url":"\#(url)","delegates":["d@p.iam.gserviceaccount.com"],"source_credentials":\#(Self.authorizedUser)}"#
        )
        guard case .impersonated(let source, let found, let delegates) = try GoogleCredentials.file(path) else {
            Issue.record("expected impersonation")
            return
        }
        #expect(found == url && delegates == ["d@p.iam.gserviceaccount.com"])
        guard case .authorizedUser = source else {
            Issue.record("expected an authorized-user source")
            return
        }
    }

    @Test(
        "a named file that is missing, not JSON, or of a kind FleetAuth cannot use is an error, not a fallback",
        arguments: [
            ("missing", nil, "does not exist"),
            ("garbage", "{not json", "not a JSON object"),
            ("external", #"{"type":"external_account"}"#, "\"external_account\""),
            ("incomplete", #"{"type":"authorized_user","client_id":"c"}"#, "client_secret"),
        ] as [(String, String?, String)]
    )
    func refused(_ name: String, _ text: String?, _ problem: String) throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try text.map { try write(name, $0) } ?? directory + "/" + name
        let error = #expect(throws: SigningError.self) {
            try GoogleCredentials.applicationDefault(environment: ["GOOGLE_APPLICATION_CREDENTIALS": path])
        }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message.contains(problem) == true, "\(error?.message ?? "")")
    }
}
