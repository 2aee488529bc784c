import FleetAuthCore
import FleetAuthJWT
import NIOConcurrencyHelpers

extension Keyring {
    /// What `/readyz` says of signing: for each family that cannot sign now, why.
    ///
    /// A family without a signing key, or whose keyless signer this process lacks, fails at once. A family whose
    /// last signature failed (IAM refusing, the metadata server down), or that has not signed yet, is tried with a
    /// throwaway token; one that signed its last token is not tried again, so probes cost IAM nothing while all is
    /// well.
    func signingProblems() async -> [(TokenFamily, String)] {
        await withTaskGroup(of: (TokenFamily, String)?.self) { group in
            for family in TokenFamily.allCases {
                group.addTask { await self.signingProblem(family).map { (family, $0) } }
            }
            var problems: [(TokenFamily, String)] = []
            for await problem in group { if let problem { problems.append(problem) } }
            return problems.sorted { $0.0.rawValue < $1.0.rawValue }
        }
    }

    private func signingProblem(_ family: TokenFamily) async -> String? {
        let minter: FleetEngineTokenMinter
        do {
            minter = try self.minter(for: family).0
        } catch {
            return error.message
        }
        if signingHealth.withLockedValue({ $0[family] }) == .some(nil) { return nil }
        guard let endpoint = TokenServerEndpoint.all.first(where: { $0.family == family }),
            let type = try? endpoint.tokenType(id: "readiness-probe")
        else { return nil }
        do {
            _ = try await minter.mint(type, now: clock.currentDate)
            noteSigning(family, failure: nil)
            return nil
        } catch {
            let message = SecretRedaction.redacted((error as? SigningError)?.message ?? "\(error)")
            noteSigning(family, failure: message)
            return message
        }
    }

    /// Records how `family`'s last signature went (`failure` nil: it worked), for ``signingProblems()``.
    func noteSigning(_ family: TokenFamily, failure: String?) {
        signingHealth.withLockedValue { $0[family] = .some(failure) }
    }
}
