import FleetAuthClient
import FleetAuthCore
import FleetTokenServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where the demo creates its app users: the local token server's directory, or a deployed token server's admin API
/// with an operator's session.
protocol DemoUsers: Sendable {
    func add(_ user: AppUser, password: String, grants: [Grant]) async throws
}

extension UserDirectory: DemoUsers {
    func add(_ user: AppUser, password: String, grants: [Grant]) async throws {
        try await addUser(user, password: password)
        for grant in grants { try await self.grant(grant, to: user.username) }
    }
}

/// A deployed token server's admin API (`/v1/admin/users`), called as an operator.
struct AdminAPIUsers: DemoUsers {
    let baseURL: URL
    let operatorSession: TokenServerSession

    static func logIn(baseURL: URL, username: String, password: String) async throws -> AdminAPIUsers {
        do {
            return AdminAPIUsers(
                baseURL: baseURL,
                operatorSession: try await TokenServerSession.logIn(
                    baseURL: baseURL,
                    username: username,
                    password: password
                )
            )
        } catch {
            throw CLIError("Cannot log in to \(baseURL.absoluteString) as operator \(username): \(error.message)")
        }
    }

    func add(_ user: AppUser, password: String, grants: [Grant]) async throws {
        try await post(
            "v1/admin/users",
            ["username": .string(user.username), "role": .string(user.role.rawValue), "password": .string(password)]
        )
        for grant in grants {
            try await post(
                "v1/admin/users/\(user.username)/grants",
                ["kind": .string(grant.kind.rawValue), "id": .string(grant.id)]
            )
        }
    }

    private func post(_ path: String, _ body: JSONObject) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: 15)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(operatorSession.sessionToken)", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(body.jsonBytes)
        let (data, response) = try await URLSession.shared.cancellationSafeData(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw CLIError("POST \(path): \(status) \(String(decoding: data.prefix(300), as: UTF8.self))")
        }
    }
}
