import Foundation
public import HTTPTypes

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The load balancers and reverse proxies in front of the token server, whose word on the client's address is
/// believed: the login throttle counts failures by the client's address, and behind a proxy every TCP peer is the
/// proxy, so one client's bad logins would lock out everyone.
///
/// A request from a trusted proxy takes its client from `Forwarded` (RFC 7239, its `for=` parameters) or, without
/// it, `X-Forwarded-For`: the addresses are read from the right (the one the nearest proxy added) past every trusted
/// proxy, and the first that is not one is the client. A request from any other peer is that peer: its headers are
/// never read, so no client can name another address to dodge or spend someone else's throttle.
public struct TrustedProxies: Sendable, Hashable {
    /// An address with a prefix length: `10.0.0.0/8`, `fd00::/8`, or one address.
    struct Network: Sendable, Hashable {
        let bytes: [UInt8]
        let prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefix
            for (a, b) in zip(address, bytes) where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let networks: [Network]

    /// No proxy is trusted: every client is its TCP peer.
    public static let none = TrustedProxies(networks: [])

    private init(networks: [Network]) { self.networks = networks }

    /// The proxies `specifications` name, each an IPv4 or IPv6 address or network in CIDR form.
    public init(_ specifications: [String]) throws(TrustedProxiesError) {
        var networks: [Network] = []
        for specification in specifications {
            let parts = specification.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = parts.first.flatMap(Self.bytes) else { throw TrustedProxiesError(specification) }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else { throw TrustedProxiesError(specification) }
            networks.append(Network(bytes: bytes, prefix: prefix))
        }
        self.networks = networks
    }

    /// Whether `address` is a trusted proxy.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client of a request that came from `peer` with `headers`.
    public func client(peer: String?, headers: HTTPFields) -> String? {
        guard let peer, !networks.isEmpty, contains(peer) else { return peer }
        let chain = Self.forwarded(headers) ?? Self.xForwardedFor(headers)
        // From the right: past the proxies, the first address that is not one of them.
        for address in chain.reversed() where !contains(address) { return address }
        return chain.first ?? peer
    }

    /// The `for=` addresses of every `Forwarded` element, in order; nil without the header.
    static func forwarded(_ headers: HTTPFields) -> [String]? {
        let values = headers[values: .init("Forwarded")!]
        guard !values.isEmpty else { return nil }
        var addresses: [String] = []
        for element in values.joined(separator: ",").split(separator: ",") {
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else {
                    continue
                }
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                value = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                // `[2001:db8::1]:4711` and `192.0.2.60:4711`: the address without its port.
                if value.hasPrefix("["), let end = value.firstIndex(of: "]") {
                    value = String(value[value.index(after: value.startIndex)..<end])
                } else if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
                    value = String(value[..<colon])
                }
                addresses.append(value)
            }
        }
        return addresses
    }

    static func xForwardedFor(_ headers: HTTPFields) -> [String] {
        headers[values: .init("X-Forwarded-For")!].joined(separator: ",").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    /// The address's bytes (4 or 16), or nil when it is no IP address.
    static func bytes(_ address: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}

/// A `--trusted-proxy` that is no address or network.
public struct TrustedProxiesError: Error, Hashable, CustomStringConvertible {
    /// The refused `--trusted-proxy` value, as given.
    public let specification: String
    init(_ specification: String) { self.specification = specification }
    /// What is wrong with it, in one line.
    public var description: String {
        "\(specification) is not an IP address or a network in CIDR form (10.0.0.0/8, fd00::/8)"
    }
}
