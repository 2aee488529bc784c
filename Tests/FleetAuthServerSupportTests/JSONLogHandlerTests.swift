import FleetAuthCore
import FleetAuthServerCore
import Logging
import NIOConcurrencyHelpers
import Testing

@Suite("JSON log lines")
struct JSONLogHandlerTests {
    @Test("one object per line: severity, message, time, logger, metadata as fields, the trace as Cloud Logging's")
    func lines() throws {
        let lines = NIOLockedValueBox([String]())
        var logger = Logger(label: "fleetauth.test") { label in
            JSONLogHandler(label: label, project: "demo-project") { line in lines.withLockedValue { $0.append(line) } }
        }
        logger.logLevel = .debug
        logger[metadataKey: "fleetauth.instance"] = "a"
        logger.debug(
            "probe",
            metadata: ["trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7"]
        )
        logger.warning("cannot sign a token", metadata: .fleetauth(["family": "driver", "code": "permissionDenied"]))
        let objects = try lines.withLockedValue { $0 }.map { line in
            #expect(!line.contains("\n"))
            return try StrictJSONParser().parseObject(Array(line.utf8))
        }
        #expect(objects.count == 2)
        #expect(objects[0]["severity"] == "DEBUG")
        #expect(objects[0]["message"] == "probe")
        #expect(objects[0]["logger"] == "fleetauth.test")
        #expect(objects[0]["fleetauth.instance"] == "a")
        #expect(
            objects[0]["logging.googleapis.com/trace"]
                == "projects/demo-project/traces/4bf92f3577b34da6a3ce929d0e0e4736"
        )
        #expect(objects[0]["logging.googleapis.com/spanId"] == "00f067aa0ba902b7")
        #expect(objects[0]["trace_id"] == nil)
        #expect(objects[0]["time"]?.stringValue.flatMap(RFC3339.parse) != nil)
        #expect(objects[1]["severity"] == "WARNING")
        #expect(objects[1]["fleetauth.family"] == "driver")
        #expect(objects[1]["fleetauth.code"] == "permissionDenied")
        #expect(objects[1]["logging.googleapis.com/sourceLocation"]?.objectValue?["file"] != nil)
    }

    @Test("each swift-log level has Cloud Logging's severity")
    func severities() {
        #expect(
            Logger.Level.allCases.map(JSONLogHandler.severity)
                == ["DEBUG", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL"]
        )
    }
}
