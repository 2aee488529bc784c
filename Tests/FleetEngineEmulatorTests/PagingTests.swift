import FleetAuthCore
import FleetEngineEmulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Page sizes and page tokens as Google documents them: a token pages only the query that got it, and
/// ListDeliveryVehicles answers at most 100 vehicles a page.
@Suite("Paging")
struct PagingTests {
    typealias F = EmulatorFixture
    typealias D = DeliveryFixture

    @Test("a page token works only with the query that got it; one this server did not write is refused")
    func tokensBoundToTheirQuery() async throws {
        try await ProtoContractTests.withEmulator { client in
            for id in ["a", "b", "c"] {
                _ = try await client.call(
                    .post,
                    "\(ProtoContractTests.vehicles)?vehicleId=\(id)",
                    token: F.server,
                    body: ProtoContractTests.vehicle()
                )
            }
            let list = "\(ProtoContractTests.vehicles)?\(F.autos)"
            let (_, first) = try await client.call(.get, list + "&pageSize=1", token: F.server)
            let token = try #require(first["nextPageToken"]?.stringValue)
            // The same query, another page size and header: the next page.
            let (next, second) = try await client.call(
                .get,
                list + "&pageSize=2&header.languageCode=fi&header.regionCode=FI&pageToken=\(token)",
                token: F.server
            )
            #expect(next == .ok, "\(second.jsonText)")
            #expect(ProtoContractTests.names(second, "vehicles") == ["b", "c"])
            // Another query: refused, naming the rule.
            let (other, refusal) = try await client.call(
                .get,
                list + "&vehicleState=ONLINE&pageToken=\(token)",
                token: F.server
            )
            #expect(other == .badRequest, "\(refusal.jsonText)")
            #expect(refusal["error"]?.objectValue?["message"]?.stringValue?.contains("another query") == true)
            // The bare base64 of an ID, which the tokens once were.
            let forged = Base64URL.encode(Array("a".utf8))
            let (bad, message) = try await client.call(.get, list + "&pageToken=\(forged)", token: F.server)
            #expect(bad == .badRequest)
            #expect(message["error"]?.objectValue?["message"]?.stringValue?.contains("nextPageToken") == true)
        }
    }

    @Test("ListDeliveryVehicles answers at most 100 vehicles a page, whatever pageSize asks")
    func deliveryVehiclesPageAtMost100() async throws {
        try await D.withEmulator(.sqliteInMemory) { client in
            for index in 0..<104 {
                let (status, _) = try await client.call(
                    .post,
                    "\(DeliveryAPITests.base)/deliveryVehicles?deliveryVehicleId=dv\(index)",
                    token: D.server,
                    body: "{}"
                )
                try #require(status == .ok)
            }
            let (status, page) = try await client.call(
                .get,
                "\(DeliveryAPITests.base)/deliveryVehicles?pageSize=500",
                token: D.server
            )
            #expect(status == .ok)
            #expect(page["deliveryVehicles"]?.arrayValue?.count == 100)
            #expect(page["totalSize"]?.stringValue == "104")
            let token = try #require(page["nextPageToken"]?.stringValue)
            let (_, rest) = try await client.call(
                .get,
                "\(DeliveryAPITests.base)/deliveryVehicles?pageSize=500&pageToken=\(token)",
                token: D.server
            )
            #expect(rest["deliveryVehicles"]?.arrayValue?.count == 4)
        }
    }
}
