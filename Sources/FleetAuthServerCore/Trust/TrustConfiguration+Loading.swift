import FleetAuthCore
public import FleetAuthJWT
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TrustConfiguration {
    /// Every account with its keys: file sources are read, URL sources fetched once.
    package func loadAccounts() async throws -> [(TrustedServiceAccount, [RSAVerificationKey])] {
        var result: [(TrustedServiceAccount, [RSAVerificationKey])] = []
        for entry in serviceAccounts {
            if entry.keySource.isURL {
                result.append((entry.account, try await Self.fetchKeys(from: entry.keySource.location)))
            } else {
                result.append((entry.account, try Self.loadFileKeys(for: entry)))
            }
        }
        return result
    }

    /// Fetches a JWK set over HTTP.
    @usableFromInline package static func fetchKeys(from location: String) async throws -> [RSAVerificationKey] {
        guard let url = URL(string: location), url.scheme == "http" || url.scheme == "https" else {
            throw TrustConfigurationError("\(location): not an http(s) URL")
        }
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.cancellationSafeData(for: request)
        } catch {
            throw TrustConfigurationError(
                .unreadable,
                "\(location): cannot fetch the JWK set: \(error.localizedDescription)"
            )
        }
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
            throw TrustConfigurationError(.unreadable, "\(location): the JWK set request did not answer 200")
        }
        do {
            return try JSONWebKeySet(json: Array(data)).verificationKeys()
        } catch {
            throw TrustConfigurationError("\(location): \(error.message)")
        }
    }
}
