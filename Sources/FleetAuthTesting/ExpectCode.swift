#if canImport(Testing)
    public import FleetAuthCore
    public import Testing

    /// Expects `body` to throw an error of `expected`'s type with `expected`'s code, whatever its message; returns the
    /// error for further checks. FleetAuth's errors compare every field, so a test states the code it expects:
    ///
    /// ```swift
    /// expectCode(TokenVerificationError.expired) { try verifier.verify(token, now: later) }
    /// ```
    @discardableResult
    public func expectCode<E: CodedError>(
        _ expected: E,
        _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        performing body: () throws -> some Any
    ) -> E? {
        let error = #expect(throws: E.self, comment, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == expected.code, comment, sourceLocation: sourceLocation)
        return error
    }

    /// ``expectCode(_:_:sourceLocation:performing:)`` for asynchronous work.
    @discardableResult
    public func expectCode<E: CodedError>(
        _ expected: E,
        _ comment: Comment? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        performing body: () async throws -> some Any
    ) async -> E? {
        let error = await #expect(throws: E.self, comment, sourceLocation: sourceLocation) { try await body() }
        #expect(error?.code == expected.code, comment, sourceLocation: sourceLocation)
        return error
    }
#endif
