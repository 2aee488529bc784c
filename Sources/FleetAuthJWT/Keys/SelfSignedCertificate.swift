public import Foundation

/// A self-signed X.509 v3 certificate for an RSA public key, signed with sha256WithRSAEncryption by whoever holds the
/// private key (a key file, or a PKCS#11 token that never lets it out).
///
/// This is the form Google accepts for uploading a public key to a service account
/// (`gcloud iam service-accounts keys upload cert.pem --iam-account EMAIL`), and the form Google serves a service
/// account's public keys in at `https://www.googleapis.com/service_accounts/v1/metadata/x509/EMAIL`. The subject and
/// issuer are `CN=<email>`; the certificate carries no extensions.
public struct SelfSignedCertificate: Sendable, Hashable {
    /// The certificate, DER-encoded.
    public let derRepresentation: [UInt8]

    /// Builds and signs a certificate.
    ///
    /// - Parameters:
    ///   - publicKey: the key the certificate certifies (and that verifies its signature).
    ///   - commonName: the subject's and issuer's CN, usually the service account's email.
    ///   - serialNumber: a positive serial number (random 16 bytes by default).
    ///   - notBefore: the start of validity (whole seconds).
    ///   - notAfter: the end of validity (whole seconds).
    ///   - sign: computes the RSASSA-PKCS1-v1_5 SHA-256 signature of the DER `TBSCertificate` it is given.
    public static func make(
        publicKey: RSAVerificationKey,
        commonName: String,
        serialNumber: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) },
        notBefore: Date,
        notAfter: Date,
        sign: ([UInt8]) async throws -> [UInt8]
    ) async throws -> SelfSignedCertificate {
        let sha256WithRSA = DER.sequence([DER.objectIdentifier([1, 2, 840, 113_549, 1, 1, 11]), DER.null])
        let name = DER.sequence([
            DER.set([DER.sequence([DER.objectIdentifier([2, 5, 4, 3]), DER.utf8String(commonName)])])
        ])
        let tbs = DER.sequence([
            DER.explicit(0, DER.integer([2])),
            DER.integer(serialNumber.drop { $0 == 0 }.isEmpty ? [1] : Array(serialNumber)),
            sha256WithRSA,
            name,
            DER.sequence([DER.time(notBefore), DER.time(notAfter)]),
            name,
            publicKey.subjectPublicKeyInfoDER,
        ])
        let signature = try await sign(tbs)
        return SelfSignedCertificate(
            derRepresentation: DER.sequence([tbs, sha256WithRSA, DER.bitString(signature)])
        )
    }

    /// The certificate as a PEM `CERTIFICATE` document, lines of 64 characters, ending with a newline.
    public var pemRepresentation: String {
        let base64 = Data(derRepresentation).base64EncodedString()
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<end]))
            index = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The few DER encodings a certificate needs (X.690).
enum DER {
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out = [tag]
        if content.count < 128 {
            out.append(UInt8(content.count))
        } else {
            var length = content.count
            var bytes: [UInt8] = []
            while length > 0 {
                bytes.insert(UInt8(length & 0xff), at: 0)
                length >>= 8
            }
            out.append(0x80 | UInt8(bytes.count))
            out += bytes
        }
        return out + content
    }

    static func sequence(_ items: [[UInt8]]) -> [UInt8] { tlv(0x30, items.flatMap { $0 }) }
    static func set(_ items: [[UInt8]]) -> [UInt8] { tlv(0x31, items.flatMap { $0 }) }
    static let null: [UInt8] = [0x05, 0x00]
    static func explicit(_ number: UInt8, _ content: [UInt8]) -> [UInt8] { tlv(0xa0 | number, content) }
    static func utf8String(_ text: String) -> [UInt8] { tlv(0x0c, Array(text.utf8)) }
    static func bitString(_ bytes: [UInt8]) -> [UInt8] { tlv(0x03, [0] + bytes) }

    /// A non-negative INTEGER from big-endian magnitude bytes.
    static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    static func objectIdentifier(_ arcs: [UInt64]) -> [UInt8] {
        var content = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var chunk: [UInt8] = [UInt8(arc & 0x7f)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.insert(UInt8(rest & 0x7f) | 0x80, at: 0)
                rest >>= 7
            }
            content += chunk
        }
        return tlv(0x06, content)
    }

    /// UTCTime before 2050, GeneralizedTime from 2050 on (RFC 5280 §4.1.2.5).
    static func time(_ date: Date) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let year = c.year ?? 1970
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let rest = two(c.month) + two(c.day) + two(c.hour) + two(c.minute) + two(c.second) + "Z"
        if year < 2050 {
            return tlv(0x17, Array((two(year % 100) + rest).utf8))
        }
        return tlv(0x18, Array((String(format: "%04d", year) + rest).utf8))
    }
}
