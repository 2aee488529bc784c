public import FleetAuthServerSupport

/// An error as Fleet Engine answers it: a canonical status and a message, sent over REST as Google's JSON error
/// body `{"error":{"code":403,"message":"...","status":"PERMISSION_DENIED"}}` with `code` the HTTP status.
///
/// It is `GoogleAPIError`, the error of both FleetAuth servers; this name says where it comes from.
public typealias FleetEngineError = GoogleAPIError
